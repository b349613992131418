// Package draw is how the chat screen draws a line:
//   - Styles: the screen's Lip Gloss styles, each with its escape
//     sequences worked out once, so a span costs two string joins;
//   - Width, Clip, Pad, Fit, Wrap, Columns: styled lines measured and cut
//     to terminal cells, fast for ASCII and as Lip Gloss measures the rest;
//   - Diff: a unified diff coloured line by line, its control characters
//     shown as '?';
//   - Markdown: a model's reply rendered with internal/ui/mdrender.
//
// It does no IO and keeps no state.
package draw
