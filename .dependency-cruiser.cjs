// The floors of src/, lowest first (../shared/ARCHITECTURE.md). A file may import its own floor or a lower
// one, never a higher one; type-only imports count.
const FLOORS = [
  ['ground', '^src/(lib|db|logs)/|^src/(config|version)[.]ts$'],
  ['infra', '^src/(settings|cache|tasks|http|mail|outbound)/'],
  ['domain', '^src/(tiers|accounts|models|drive|events|store|backups)/'],
  ['actions', '^src/actions/'],
  ['doors', '^src/(surfaces|web|openapi|cli)/|^src/services[.]ts$'],
  ['kit', '^src/plugin-kit/'],
  ['guests', '^src/plugins/'],
  ['roof', '^src/boot/|^src/main[.]ts$'],
];
// Provider SDKs whose loading every CLI command and process start would pay if they were imported statically.
const LOADED_ON_USE = 'node_modules/(stripe|@simplewebauthn/server|@apple/app-store-server-library|google-auth-library|nodemailer|smtp-server|mailparser)/';
const looksUp = FLOORS.slice(0, -1).map(([name, path], i) => ({
  name: `${name}-looks-up`,
  severity: 'error',
  from: { path },
  to: { path: FLOORS.slice(i + 1).map(([, p]) => `(${p})`).join('|') },
}));
// Inside the domain floor: tiers < accounts < models, drive < events < store; backups stands alone.
const DOMAIN_ABOVE = {
  tiers: 'accounts|models|drive|events|store|backups',
  accounts: 'models|drive|events|store|backups',
  models: 'drive|events|store|backups',
  drive: 'models|events|store|backups',
  events: 'drive|store|backups',
  backups: 'tiers|accounts|models|drive|events|store',
};
const domainOrder = Object.entries(DOMAIN_ABOVE).map(([room, above]) => ({
  name: `${room}-looks-up`,
  severity: 'error',
  from: { path: `^src/${room}/` },
  to: { path: `^src/(${above})/` },
}));
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'type-only imports count', from: {}, to: { circular: true } },
    ...looksUp,
    ...domainOrder,
    {
      name: 'guests-are-loaded-not-imported',
      severity: 'error',
      from: { pathNot: '^src/plugins/' },
      to: { path: '^src/plugins/' },
    },
    {
      name: 'guest-stays-home',
      severity: 'error',
      from: { path: '^src/plugins/([^/]+)/' },
      to: { path: '^src/plugins/', pathNot: '^src/plugins/$1/' },
    },
    {
      name: 'provider-sdks-load-on-use',
      severity: 'error',
      comment: 'Together these take ~0.8 s to load, which every CLI command and process start would pay: import their types statically and their code with import() where it is first used.',
      // app-store-api.ts extends the App Store library's client; its one consumer imports it with import().
      from: { path: '^src/', pathNot: '^src/store/reconcile/app-store-api[.]ts$' },
      to: {
        path: LOADED_ON_USE,
        dependencyTypesNot: ['type-only', 'type-import', 'dynamic-import'],
      },
    },
    {
      name: 'app-store-client-loads-on-use',
      severity: 'error',
      comment: 'app-store-api.ts brings the App Store library with it: import it with import() where it is first used.',
      from: {},
      to: { path: '^src/store/reconcile/app-store-api[.]ts$', dependencyTypesNot: ['type-only', 'type-import', 'dynamic-import'] },
    },
    {
      name: 'services-bag-above-the-doors-only',
      severity: 'error',
      from: { pathNot: '^src/(surfaces|web|openapi|cli|plugin-kit|plugins|boot)/|^src/services[.]ts$' },
      to: { path: '^src/services[.]ts$' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    // src/ and, so the rule above can see them, the provider SDKs (not followed into).
    includeOnly: ['^src/', `^${LOADED_ON_USE}`],
    doNotFollow: { path: 'node_modules' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
