import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * `npm run size-check`: every TypeScript file in src/, streams/ and devnet/ over 400 lines, and every
 * function over 150 lines (declarations, methods, function expressions and arrow functions, nested
 * ones counted in their outer function too), read with the TypeScript compiler's parser. Exits 1 when
 * any is found, naming each as `path:line`.
 */
const maxFileLines = 400;
const maxFunctionLines = 150;
const root = fileURLToPath(new URL('../', import.meta.url));
const folders = ['src', 'streams', 'devnet'];

function* typescriptFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* typescriptFiles(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

/** A function's name as a reader finds it: its own, or the variable, property or method it is assigned to. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

const problems: string[] = [];
for (const folder of folders) {
  for (const path of typescriptFiles(join(root, folder))) {
    const text = readFileSync(path, 'utf8');
    const file = relative(root, path);
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const lines = source.getLineAndCharacterOfPosition(text.length).line + (text.endsWith('\n') ? 0 : 1);
    if (lines > maxFileLines) problems.push(`${file}: ${lines} lines (at most ${maxFileLines})`);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const length = last - first + 1;
        if (length > maxFunctionLines) {
          problems.push(
            `${file}:${first + 1}: function ${nameOf(node as ts.FunctionLikeDeclaration)} is ${length} lines (at most ${maxFunctionLines})`,
          );
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
}
for (const problem of problems) process.stdout.write(`${problem}\n`);
if (problems.length > 0) process.exitCode = 1;
else
  process.stdout.write(`size-check: no file in ${folders.join('/, ')}/ over ${maxFileLines} lines, no function over ${maxFunctionLines}\n`);
