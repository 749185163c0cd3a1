// The README and the guides link to each other, to the generated reference and to the repository's files: every
// relative link must reach a file, and every `#anchor` a heading there, so a moved section cannot strand a reader.
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, guideFiles, read, relativeLinks, repo } from './docs/markdown.ts';

describe('docs: links', () => {
  it.each(guideFiles())('every relative link of %s reaches a file and, with #anchor, a heading in it', (file) => {
    const broken: string[] = [];
    for (const link of relativeLinks(read(file))) {
      const [path, hash] = link.split('#') as [string, string | undefined];
      const target = path ? normalize(join(dirname(file), path)) : file;
      if (!existsSync(join(repo, target))) broken.push(`${link} (no file ${target})`);
      else if (hash && target.endsWith('.md') && !anchors(read(target)).has(hash)) broken.push(`${link} (no heading #${hash} in ${target})`);
    }
    expect(broken).toEqual([]);
  });

  it('the README stays a front door: at most 300 lines, and it links the three questions a newcomer asks first', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme).toMatch(/what happens to my change when the tab closes.*\]\(docs\/leaving\.md\)/i);
    expect(readme).toMatch(/how do I show what is queued.*\]\(docs\/store\.md#showing-what-is-queued\)/i);
    expect(readme).toMatch(/what do I do on `auth-required`.*\]\(docs\/errors\.md#auth-required\)/i);
  });

  it('every guide opens with the question it answers', () => {
    for (const file of guideFiles().filter((f) => f.startsWith('docs/'))) {
      const [title, question] = read(file).split('\n\n');
      expect(title, file).toMatch(/^# [^\n]+$/);
      expect(question, file).toMatch(/^\*\*The question:\*\* [^]+\?$/);
    }
  });
});
