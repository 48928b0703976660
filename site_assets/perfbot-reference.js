'use strict';

/* fusion-perfbot: reference lines on asv's graphs, as a flot plugin (flot's own extension
   point: $.plot.plugins), so that neither asv's graphdisplay.js nor the vendored flot is edited.

   The build lists the lines in #perfbot-config's data-reference-lines ({benchmark: {value,
   label, band}}, bot/site/page.py); for the ratio graphs (bench_rmsnorm_bwd.RatioToNvfuser.track_ratio)
   it is y = 1: above the line Thunder is slower than the hand-written nvFuser fusion.

   On the main graph of a listed benchmark the plugin widens the y axis to hold y (asv sets the
   axis to the data's range, which may leave 1 outside), then draws a dashed line at y over the
   data (a series that stays near 1 would hide a line drawn under it, as a flot marking is) and
   writes the line's meaning beside it.

   It also marks the main-branch watch's changes (data-changes: {benchmark: [{last_good,
   first_bad, label, status}]}, bot/site/watch.py): a vertical line halfway between the last
   good and the first bad commit (their revisions, or dates on asv's date scale), solid for a
   confirmed change, dotted for a pending one, labelled at the top. Where it drew them is kept
   on the plot (plot.perfbotMarks), so that a test can look at those pixels. */
(function ($) {
    /* flot merges these into every plot's options, so a test can read what is drawn. */
    var OPTIONS = {
        perfbotReference: {color: '#222222', lineWidth: 1.5, dash: [8, 4]},
        perfbotChanges: {color: '#c0392b', lineWidth: 2, dash: [2, 4]}
    };

    function lines() {
        var raw = $('#perfbot-config').attr('data-reference-lines');
        try {
            return raw ? JSON.parse(raw) : {};
        } catch (err) {
            return {};
        }
    }

    function config(name) {
        var raw = $('#perfbot-config').attr(name);
        try {
            return raw ? JSON.parse(raw) : {};
        } catch (err) {
            return {};
        }
    }

    function current_benchmark(plot) {
        if (plot.getPlaceholder().attr('id') !== 'main-graph' || !$.asv) {
            return null;
        }
        return $.asv.parse_hash_string(window.location.hash).location[0];
    }

    function revision_of(hash) {
        var map = ($.asv.main_json || {}).revision_to_hash || {};
        for (var rev in map) {
            if (Object.prototype.hasOwnProperty.call(map, rev) && map[rev] === hash) {
                return Number(rev);
            }
        }
        return null;
    }

    function x_of(rev) {
        var state = $.asv.parse_hash_string(window.location.hash).params || {};
        var scale = state['x-axis-scale'] || [];
        if (scale.indexOf('date') !== -1) {
            return (($.asv.main_json || {}).revision_to_date || {})[rev];
        }
        return rev;
    }

    function draw_marks(plot, ctx) {
        var benchmark = current_benchmark(plot);
        var all = config('data-changes');
        plot.perfbotMarks = [];
        if (benchmark === null || !Object.prototype.hasOwnProperty.call(all, benchmark)) {
            return;
        }
        var style = plot.getOptions().perfbotChanges;
        var axis = plot.getAxes().xaxis;
        var off = plot.getPlotOffset();
        $.each(all[benchmark], function (i, mark) {
            var good = revision_of(mark.last_good), bad = revision_of(mark.first_bad);
            if (good === null || bad === null) {
                return;  /* a commit this site does not hold: nothing to mark */
            }
            var x = (x_of(good) + x_of(bad)) / 2;
            if (!(axis.min <= x && x <= axis.max)) {
                return;
            }
            var px = Math.round(off.left + axis.p2c(x)) + 0.5;
            var confirmed = mark.status === 'confirmed';
            ctx.save();
            ctx.strokeStyle = style.color;
            ctx.lineWidth = style.lineWidth;
            ctx.setLineDash(confirmed ? [] : style.dash);
            ctx.beginPath();
            ctx.moveTo(px, off.top);
            ctx.lineTo(px, off.top + plot.height());
            ctx.stroke();
            ctx.font = '12px sans-serif';
            ctx.fillStyle = style.color;
            /* the label on the side of the line with more room, so that it is never cut off */
            var right = px - off.left < plot.width() / 2;
            ctx.textAlign = right ? 'left' : 'right';
            ctx.fillText(String(mark.label), right ? px + 4 : px - 4, off.top + 14 + 14 * i);
            ctx.restore();
            plot.perfbotMarks.push({x: px, label: String(mark.label), confirmed: confirmed});
        });
    }

    function current_line(plot) {
        if (plot.getPlaceholder().attr('id') !== 'main-graph' || !$.asv) {
            return null;
        }
        var benchmark = $.asv.parse_hash_string(window.location.hash).location[0];
        var all = lines();
        return Object.prototype.hasOwnProperty.call(all, benchmark) ? all[benchmark] : null;
    }

    function widen(axis, value, band) {
        if (axis.min === null || axis.min === undefined ||
            axis.max === null || axis.max === undefined) {
            return;  /* asv always sets both; an autoscaled axis is left to flot */
        }
        var span = Math.max(axis.max, value) - Math.min(axis.min, value);
        var pad = span > 0 ? span * 0.05 : Math.abs(value) * 0.05;
        /* The band around the line (the bot's smallest change of the ratio) stays on the axis:
           on a level flat within 0.2% asv's axis spanned that 0.2%, and every tick said 1.00. */
        var hold = Math.abs(value) * (band || 0);
        if (axis.min > Math.min(value - pad, value - hold)) {
            axis.min = Math.min(value - pad, value - hold);
        }
        if (axis.max < Math.max(value + pad, value + hold)) {
            axis.max = Math.max(value + pad, value + hold);
        }
    }

    function init(plot) {
        var line = null;
        plot.hooks.processOptions.push(function (plot, options) {
            line = current_line(plot);
            if (line === null) {
                return;
            }
            widen(options.yaxes[0], line.value, line.band);
            /* asv writes 3 significant digits, so ticks 0.005 apart above 1 read 1.01, 1.01:
               a ratio's ticks get the decimals flot chose for their spacing instead. */
            options.yaxes[0].tickFormatter = function (v, axis) {
                var digits = axis.tickDecimals === null || axis.tickDecimals === undefined
                    ? 3 : axis.tickDecimals;
                return v.toFixed(digits);
            };
        });
        plot.hooks.draw.push(draw_marks);
        plot.hooks.draw.push(function (plot, ctx) {
            if (line === null) {
                return;
            }
            var style = plot.getOptions().perfbotReference;
            var axis = plot.getAxes().yaxis;
            if (!(axis.min <= line.value && line.value <= axis.max)) {
                return;
            }
            var off = plot.getPlotOffset();
            var y = Math.round(off.top + axis.p2c(line.value)) + 0.5;
            ctx.save();
            ctx.strokeStyle = style.color;
            ctx.lineWidth = style.lineWidth;
            ctx.setLineDash(style.dash);
            ctx.beginPath();
            ctx.moveTo(off.left, y);
            ctx.lineTo(off.left + plot.width(), y);
            ctx.stroke();
            ctx.font = '12px sans-serif';
            ctx.fillStyle = style.color;
            ctx.textAlign = 'right';
            ctx.fillText(line.label, off.left + plot.width() - 4, y - 5);
            ctx.restore();
        });
    }

    $.plot.plugins.push({init: init, options: OPTIONS, name: 'perfbot-reference', version: '1'});
})(jQuery);
