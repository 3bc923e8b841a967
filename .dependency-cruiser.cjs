/** Holds the layering of STYLE.md: src/ is libraries only and never imports streams/. */
module.exports = {
  forbidden: [
    {
      name: 'src-never-imports-streams',
      severity: 'error',
      comment: 'src/ is the pure domain; streams/ is the composition root that wires it.',
      from: { path: '^src/' },
      to: { path: '^streams/' },
    },
    {
      name: 'product-never-imports-tests',
      severity: 'error',
      from: { path: '^(src|streams)/', pathNot: '\\.test\\.ts$' },
      to: { path: '^test/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(^|/)node_modules/' },
  },
};
