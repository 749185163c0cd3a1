// The project's markdown (README.md and docs/*.md, not the generated reference): its files, links and anchors.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository's root. */
export const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** README.md and every guide in docs/, as paths relative to the repository. */
export function guideFiles(): string[] {
  const guides = readdirSync(join(repo, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
  return ['README.md', ...guides.sort()];
}

/** A file's text. */
export const read = (file: string): string => readFileSync(join(repo, file), 'utf8');

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to dashes. */
export const anchor = (heading: string): string =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, '').replace(/ /g, '-');

/** The anchors of a markdown file's headings (fenced code left out). */
export function anchors(text: string): Set<string> {
  return new Set([...withoutFences(text).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!)));
}

/** The text with fenced code blocks blanked, so `#` comments in shell blocks are not headings. */
export const withoutFences = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '');

/** Every relative link target of a markdown file: `[text](target)`, http(s) and mailto left out. */
export function relativeLinks(text: string): string[] {
  return [...withoutFences(text).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^(https?|mailto):/.test(t));
}

/** One fenced code block: its language, its text, the line it starts on, and the marker before it, if any. */
export interface CodeBlock {
  file: string;
  line: number;
  lang: string;
  code: string;
  /** The `<!-- fragment: why -->` comment just above the fence: a block that cannot stand alone, and why. */
  fragment?: string;
}

/** The fenced code blocks of a markdown file. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const fragment = /^<!-- fragment: (.+?) -->$/.exec(lines[start - 1] ?? '')?.[1];
    blocks.push({ file, line: start + 1, lang: open[1]!, code: body.join('\n') + '\n', ...(fragment ? { fragment } : {}) });
  }
  return blocks;
}
