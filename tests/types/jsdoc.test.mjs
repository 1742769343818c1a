// Editors read hover help from the shipped declarations: every export of
// js/index.d.ts and js/replay.d.ts, and every member of every interface,
// class and object type in them (options included), carries a JSDoc comment
// with text — at least as complete as the reference's module (78 blocks).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Names of declarations and members lacking a JSDoc comment with text. */
function undocumented(file) {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const missing = [];
  const documented = (node) => ts.getJSDocCommentsAndTags(node).some((doc) => ts.isJSDoc(doc) && (doc.comment ?? '') !== '');
  const nameOf = (node) => node.name?.getText(source) ?? ts.SyntaxKind[node.kind];
  const visitMembers = (owner, members) => {
    for (const member of members) {
      if (ts.isIndexSignatureDeclaration(member)) continue;
      // The bivariance trick's single method is an implementation detail of a type alias.
      if (nameOf(member) === 'bivarianceHack') continue;
      const documentedHere = documented(member) || (ts.isConstructorDeclaration(member) && documented(owner));
      if (!documentedHere) missing.push(`${owner.name?.getText(source)}.${nameOf(member)}`);
      visitTypes(member, owner);
    }
  };
  // Object types nested in members (e.g. `cycles?: { maxPeriod }`) and in aliases.
  const visitTypes = (node, owner) => {
    ts.forEachChild(node, function walk(child) {
      // A conditional type's `extends` side is a pattern to match, not a shape to document.
      if (ts.isConditionalTypeNode(child)) {
        [child.checkType, child.trueType, child.falseType].forEach(walk);
        return;
      }
      if (ts.isTypeLiteralNode(child) && child.members.some((m) => !ts.isIndexSignatureDeclaration(m))) {
        visitMembers(owner, child.members);
        return;
      }
      ts.forEachChild(child, walk);
    });
  };
  let exported = 0;
  for (const statement of source.statements) {
    const isExported = statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!isExported || ts.isExportDeclaration(statement)) continue;
    exported++;
    const name = ts.isVariableStatement(statement)
      ? statement.declarationList.declarations.map((d) => d.name.getText(source)).join(',')
      : nameOf(statement);
    if (!documented(statement)) missing.push(name);
    if (ts.isInterfaceDeclaration(statement) || ts.isClassDeclaration(statement)) visitMembers(statement, statement.members);
    else visitTypes(statement, statement);
  }
  const blocks = source.getFullText().match(/\/\*\*/g)?.length ?? 0;
  return { missing, exported, blocks };
}

test('every export and member of index.d.ts has JSDoc, more than the reference', () => {
  const { missing, exported, blocks } = undocumented('js/index.d.ts');
  assert.deepEqual(missing, []);
  assert.ok(exported >= 50, `${exported} exports`);
  assert.ok(blocks >= 78, `${blocks} JSDoc blocks (the reference has 78)`);
});

test('every export and member of replay.d.ts has JSDoc', () => {
  const { missing } = undocumented('js/replay.d.ts');
  assert.deepEqual(missing, []);
});

test('every export and member of the AI SDK, Mastra and Cloudflare agents adapters\' .d.ts has JSDoc', () => {
  for (const file of ['js/adapters/ai-sdk.d.ts', 'js/adapters/mastra.d.ts', 'js/adapters/cloudflare-agents.d.ts']) {
    assert.deepEqual(undocumented(file).missing, [], file);
  }
});

test('the checker sees a missing comment', () => {
  const probe = ts.createSourceFile('x.d.ts', 'export interface A { /** yes */ a: 1; b: 2 }', ts.ScriptTarget.Latest, true);
  const member = probe.statements[0].members[1];
  assert.equal(ts.getJSDocCommentsAndTags(member).length, 0);
});

// The framework adapters' declarations (one row per adapter entry).
for (const file of [
  'js/adapters/langchain.d.ts',
  'js/adapters/openai-agents.d.ts',
  'js/adapters/claude-agent-sdk.d.ts',
  'js/adapters/mcp.d.ts',
]) {
  test(`every export and member of ${file} has JSDoc`, () => {
    assert.deepEqual(undocumented(file).missing, []);
  });
}
