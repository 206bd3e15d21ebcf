import { beforeAll, describe, expect, it } from 'vitest';
import { actionRegistry } from '../../src/actions/index.js';
import type { Action } from '../../src/actions/define.js';
import { coerceInput, INPUT_FIELD_ATTRIBUTES, schemaProblems, type InputField } from '../../src/actions/input.js';
import { pluginModules } from '../../src/boot/plugins.js';

// The contract's action descriptor: input is "field name to {type, required, and options enum, min, max,
// max_length, items}". Written out here, not imported, so a widened list in the code fails this test.
const CONTRACT = ['type', 'required', 'options', 'min', 'max', 'max_length', 'items'];

/** Every attribute name a field (and its items, at any depth) uses, as `field.attribute`. */
function attributesOf(name: string, field: InputField): string[] {
  const own = Object.keys(field).map((a) => `${name}.${a}`);
  return field.items ? [...own, ...attributesOf(`${name}[]`, field.items)] : own;
}

describe("action input schemas use only the contract's attributes", () => {
  let all: Action[];
  beforeAll(async () => {
    await pluginModules(); // plugin actions join the registry when their modules load
    all = actionRegistry.available({ isActive: () => true });
  });

  it('walks every registered action, core and plugin', () => {
    const names = all.map((a) => a.name);
    expect(names).toEqual(expect.arrayContaining(['register', 'vault_setup_verify', 'vault_passphrase_enroll', 'vault_rotate_verify', 'drive_link_create', 'mailbox/send']));
    expect(all.filter((a) => a.descriptor.input).length).toBeGreaterThan(40);
  });

  it('no input field of any registered action has an attribute outside the contract list', () => {
    const outside = all.flatMap((a) =>
      Object.entries(a.descriptor.input ?? {}).flatMap(([name, field]) => attributesOf(`${a.name}:${name}`, field).filter((at) => !CONTRACT.includes(at.slice(at.lastIndexOf('.') + 1)))),
    );
    expect(outside).toEqual([]);
  });

  it('the code names the same list as the contract', () => {
    expect([...INPUT_FIELD_ATTRIBUTES].sort()).toEqual([...CONTRACT].sort());
  });

  it('a schema with any other attribute (min_length, pattern) is refused at registration', () => {
    expect(schemaProblems({ passphrase: { type: 'password', min_length: 12 } as unknown as InputField })).toEqual([
      "passphrase: 'min_length' is not an input attribute of the contract (type, required, options, min, max, max_length, items)",
    ]);
    expect(schemaProblems({ tags: { type: 'array', items: { type: 'string', pattern: '^a' } as unknown as InputField } })).toEqual([
      "tags[]: 'pattern' is not an input attribute of the contract (type, required, options, min, max, max_length, items)",
    ]);
  });

  it.each(['vault_setup_verify', 'vault_passphrase_enroll', 'vault_rotate_verify'])('%s refuses a passphrase under 12 characters (min, enforced)', (name) => {
    const input = all.find((a) => a.name === name)!.descriptor.input!;
    expect(input.passphrase!.min).toBe(12);
    const short = coerceInput({ passphrase: input.passphrase! }, { passphrase: 'eleven char' });
    expect(short).toEqual({ ok: false, errors: { passphrase: 'must be at least 12 characters' } });
    expect(coerceInput({ passphrase: input.passphrase! }, { passphrase: 'twelve chars' })).toEqual({ ok: true, values: { passphrase: 'twelve chars' } });
  });
});
