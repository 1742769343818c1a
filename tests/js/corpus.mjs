// The conformance loop now ships in the package (js/conformance.mjs, used
// by `npx doomloop conformance`); the test runners keep importing it here.
export * from '../../js/conformance.mjs';
