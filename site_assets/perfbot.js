'use strict';

/* The site's own pages inside asv's: the landing view ("overview") and the commits page
   ("commits"), registered through asv's own $.asv.register_page, the way asv's grid, list and
   regressions views register theirs. asv hides its own views when it switches pages but does
   not know these, so each is hidden here whenever the route is another. index.html sends the
   bare site root to #overview.

   asv's views link a commit to index.html#commits?commit=<hash> (the build publishes with that
   show_commit_url, bot/site/commits_page.py): the commits page marks the row whose full hash
   starts with it and scrolls to it. */
$(document).ready(function() {
    var pages = {
        overview: {element: $('#perfbot-landing'), title: 'Thunder vs hand-written nvFuser'},
        commits: {element: $('#perfbot-commits'), title: 'Commits'}
    };

    function mark_commit(params) {
        var rows = $('#perfbot-commits tbody tr');
        rows.removeClass('target');
        var wanted = params && params.commit ? String(params.commit[0] || '').toLowerCase() : '';
        if (!/^[0-9a-f]{4,40}$/.test(wanted)) {
            return;
        }
        var hit = rows.filter(function() {
            return String($(this).attr('data-commit')).indexOf(wanted) === 0;
        });
        if (hit.length === 1) {
            hit.addClass('target');
            hit[0].scrollIntoView({block: 'center'});
        }
    }

    $.each(pages, function(name, page) {
        $.asv.register_page(name, function(params) {
            $.each(pages, function(other, p) {
                if (other !== name) {
                    p.element.hide();
                }
            });
            page.element.show();
            $('#title').text(page.title);
            if (name === 'commits') {
                mark_commit(params);
            }
        });
    });

    $(window).on('hashchange', function() {
        var route = $.asv.parse_hash_string(window.location.hash).location[0];
        $.each(pages, function(name, page) {
            if (route !== name) {
                page.element.hide();
            }
        });
    });
});
