import { describe, expect, it } from 'vitest';
import { defineAction } from '../../src/actions/define.js';
import { ActionDefinitionError, ActionRegistry } from '../../src/actions/registry.js';

const run = async () => ({ data: {} });
const plugins = (...active: string[]) => ({ isActive: (name: string) => active.includes(name) });

describe('a core-named action that needs a plugin', () => {
  const registry = new ActionRegistry([defineAction({ name: 'book_it', plugin: 'rooms', description: 'Book', mutates: true, run })]);

  it('resolves and is listed only while its plugin is active', () => {
    expect(registry.resolve('book_it', plugins())).toEqual({ kind: 'unknown' });
    expect(registry.available(plugins()).map((a) => a.name)).toEqual([]);
    expect(registry.resolve('book_it', plugins('rooms')).kind).toBe('action');
    expect(registry.available(plugins('rooms')).map((a) => a.name)).toEqual(['book_it']);
  });

  it('refuses a plugin that contradicts a namespaced name', () => {
    expect(() => new ActionRegistry([defineAction({ name: 'mailbox/x', plugin: 'rooms', description: 'X', mutates: false, run })])).toThrow(ActionDefinitionError);
  });
});
