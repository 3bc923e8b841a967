import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCodes, FlashlogError, JsonRpcError, rpcErrorCatalogue, ServerError } from './errors.ts';

const page = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');

/** The first cell of every row of the table under `heading` in docs/errors.md. */
function firstColumn(heading: string): string[] {
  const section = page.split(/^## /m).find((part) => part.startsWith(`${heading}\n`));
  if (!section) throw new Error(`docs/errors.md has no section "## ${heading}"`);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| ---') && !line.startsWith('| code '))
    .map((line) => line.split('|')[1]!.trim().replace(/`/g, ''));
}

describe('the error catalogue', () => {
  it('docs/errors.md lists every code of the catalogue, once, in its order, and no other', () => {
    expect(firstColumn('Codes')).toEqual([...errorCodes]);
  });

  it('docs/errors.md lists every JSON-RPC code flashlog answers on its own account, with its class', () => {
    const rows = page
      .split(/^## /m)
      .find((part) => part.startsWith('JSON-RPC codes\n'))!
      .split('\n')
      .filter((line) => /^\| -?\d+ \|/.test(line))
      .map((line) => line.split('|').map((cell) => cell.trim().replace(/`/g, '')));
    expect(rows.map(([, code, name]) => `${code} ${name}`)).toEqual(rpcErrorCatalogue.map((error) => `${error.rpcCode} ${error.name}`));
  });

  it('codes are unique and in alphabetical order, so a new one has one place to go', () => {
    expect(new Set(errorCodes).size).toBe(errorCodes.length);
    expect([...errorCodes]).toEqual([...errorCodes].sort());
  });

  it('a JSON-RPC error carries RPC_<number> as its code and answers that number', () => {
    const error = new ServerError('upstream RPC unreachable', { retryable: true });
    expect(error).toBeInstanceOf(FlashlogError);
    expect(error.code).toBe('RPC_-32000');
    expect(error.retryable).toBe(true);
    expect(error.toJSON()).toEqual({ code: -32000, message: 'upstream RPC unreachable' });
    expect(new JsonRpcError(3, 'execution reverted', { data: '0x' }).toJSON()).toEqual({
      code: 3,
      message: 'execution reverted',
      data: '0x',
    });
  });
});
