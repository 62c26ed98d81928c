/**
 * Word-wraps each line of a help text to `width` columns (terminals default to 80). A
 * continuation line is indented four spaces past its line's own indent, so a wrapped
 * entry still reads as one. A single word longer than the width is left whole.
 */
export function wrapText(text: string, width = 80): string {
  return text
    .split("\n")
    .flatMap((line) => wrapLine(line, width))
    .join("\n");
}

function wrapLine(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const indent = /^ */.exec(line)?.[0] ?? "";
  const continuation = `${indent}    `;
  const out: string[] = [];
  let current = indent;
  for (const word of line.slice(indent.length).split(" ")) {
    const prefix = out.length === 0 ? indent : continuation;
    if (current.length > prefix.length && current.length + 1 + word.length > width) {
      out.push(current);
      current = continuation + word;
    } else {
      current = current.length > prefix.length ? `${current} ${word}` : prefix + word;
    }
  }
  out.push(current);
  return out;
}
