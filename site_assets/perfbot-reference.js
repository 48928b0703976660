'use strict';

/* fusion-perfbot: reference lines on asv's graphs, as a flot plugin (flot's own extension
   point: $.plot.plugins), so that neither asv's graphdisplay.js nor the vendored flot is edited.

   The build lists the lines in #perfbot-config's data-reference-lines ({benchmark: {value,
   label}}, bot/site/page.py); for the ratio graphs (bench_rmsnorm_bwd.RatioToNvfuser.track_ratio)
   it is y = 1: above the line Thunder is slower than the hand-written nvFuser fusion.

   On the main graph of a listed benchmark the plugin widens the y axis to hold y (asv sets the
   axis to the data's range, which may leave 1 outside), then draws a dashed line at y over the
   data (a series that stays near 1 would hide a line drawn under it, as a flot marking is) and
   writes the line's meaning beside it. */
(function ($) {
    /* flot merges these into every plot's options, so a test can read what is drawn. */
    var OPTIONS = {perfbotReference: {color: '#222222', lineWidth: 1.5, dash: [8, 4]}};

    function lines() {
        var raw = $('#perfbot-config').attr('data-reference-lines');
        try {
            return raw ? JSON.parse(raw) : {};
        } catch (err) {
            return {};
        }
    }

    function current_line(plot) {
        if (plot.getPlaceholder().attr('id') !== 'main-graph' || !$.asv) {
            return null;
        }
        var benchmark = $.asv.parse_hash_string(window.location.hash).location[0];
        var all = lines();
        return Object.prototype.hasOwnProperty.call(all, benchmark) ? all[benchmark] : null;
    }

    function widen(axis, value) {
        if (axis.min === null || axis.min === undefined ||
            axis.max === null || axis.max === undefined) {
            return;  /* asv always sets both; an autoscaled axis is left to flot */
        }
        var span = Math.max(axis.max, value) - Math.min(axis.min, value);
        var pad = span > 0 ? span * 0.05 : Math.abs(value) * 0.05;
        if (axis.min > value - pad) {
            axis.min = value - pad;
        }
        if (axis.max < value + pad) {
            axis.max = value + pad;
        }
    }

    function init(plot) {
        var line = null;
        plot.hooks.processOptions.push(function (plot, options) {
            line = current_line(plot);
            if (line === null) {
                return;
            }
            widen(options.yaxes[0], line.value);
        });
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
