'use strict';

/* The landing view: an asv page named "overview", registered through asv's own
   $.asv.register_page, the way asv's grid, list and regressions views register theirs.
   asv hides its own views when it switches pages but does not know this one, so it is hidden
   here whenever the route is anything else. index.html sends the bare site root to #overview. */
$(document).ready(function() {
    var landing = $('#perfbot-landing');

    $.asv.register_page('overview', function(params) {
        landing.show();
        $('#title').text('Thunder vs hand-written nvFuser');
    });

    $(window).on('hashchange', function() {
        var route = $.asv.parse_hash_string(window.location.hash).location[0];
        if (route !== 'overview') {
            landing.hide();
        }
    });
});
