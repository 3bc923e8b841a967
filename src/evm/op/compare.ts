import { headerFields, headerToRpc, type BlockHeader, type HeaderField } from '../../op/header.ts';

export interface HeaderComparison {
  readonly computed: Record<HeaderField, string>;
  readonly expected?: Record<HeaderField, string> | undefined;
  /** Fields whose values differ (empty when no expected header is known). */
  readonly differing: readonly HeaderField[];
}

/** The computed header beside the expected one, field by field. */
export function compareHeaders(computed: BlockHeader, expected: BlockHeader | undefined): HeaderComparison {
  const mine = headerToRpc(computed);
  if (!expected) return { computed: mine, differing: [] };
  const theirs = headerToRpc(expected);
  return { computed: mine, expected: theirs, differing: headerFields.filter((field) => mine[field] !== theirs[field]) };
}

export const fieldWidth = Math.max(...headerFields.map((field) => field.length));

/** Two columns, one line per field, `≠` where they differ. */
export function formatComparison(comparison: HeaderComparison): string {
  const width = fieldWidth;
  return headerFields
    .filter((field) => comparison.computed[field] !== undefined || comparison.expected?.[field] !== undefined)
    .map((field) => {
      const mine = comparison.computed[field] ?? '-';
      if (!comparison.expected) return `${field.padEnd(width)}  ${mine}`;
      const theirs = comparison.expected[field] ?? '-';
      return `${field.padEnd(width)}  ${mine === theirs ? ' ' : '≠'} ${mine}${mine === theirs ? '' : `  expected ${theirs}`}`;
    })
    .join('\n');
}
