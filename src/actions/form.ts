/** Form definitions served by GET /form/{action}: plain data a web or native client renders. */

export interface FormOption {
  value: string;
  label: string;
}

/**
 * Which fields a choice reveals or hides. A drop or radio keys the rule on the selected option value; a
 * checkbox on 'checked' or 'unchecked'; a checkbox_list on an option value being among those checked.
 */
export type VisibilityRules = Record<string, { show?: string[]; hide?: string[] }>;

export type FormFieldType =
  | 'text'
  | 'email'
  | 'password'
  | 'textarea'
  | 'hidden'
  | 'number'
  | 'date'
  | 'datetime'
  | 'drop'
  | 'checkbox'
  | 'radio'
  | 'checkbox_list';

export interface FormField {
  type: FormFieldType;
  name: string;
  label: string;
  value: unknown;
  required?: boolean;
  maxlength?: number;
  min?: number;
  max?: number;
  options?: FormOption[];
  visibility_rules?: VisibilityRules;
  help?: string;
}

/** What a form builder returns; the surface adds schema_version and the form's name and submit_to. */
export interface FormDefinition {
  submit_label: string;
  fields: FormField[];
}

const RULED_TYPES: ReadonlySet<FormFieldType> = new Set(['drop', 'checkbox', 'radio', 'checkbox_list']);

type FieldOptions = Partial<Omit<FormField, 'type' | 'name' | 'label'>>;

function make(type: FormFieldType, name: string, label: string, o: FieldOptions): FormField {
  const { value, ...attributes } = o;
  const fallback = type === 'checkbox' ? false : null;
  return { type, name, label, value: value === undefined ? fallback : value, ...attributes };
}

/** Field constructors, so a builder reads like the form it describes. */
export const field = {
  text: (name: string, label: string, o: FieldOptions = {}) => make('text', name, label, o),
  email: (name: string, label: string, o: FieldOptions = {}) => make('email', name, label, o),
  password: (name: string, label: string, o: FieldOptions = {}) => make('password', name, label, { ...o, value: '' }),
  textarea: (name: string, label: string, o: FieldOptions = {}) => make('textarea', name, label, o),
  hidden: (name: string, value: unknown) => make('hidden', name, '', { value }),
  number: (name: string, label: string, o: FieldOptions = {}) => make('number', name, label, o),
  date: (name: string, label: string, o: FieldOptions = {}) => make('date', name, label, o),
  drop: (name: string, label: string, options: FormOption[], o: FieldOptions = {}) => make('drop', name, label, { ...o, options }),
  radio: (name: string, label: string, options: FormOption[], o: FieldOptions = {}) => make('radio', name, label, { ...o, options }),
  checkbox: (name: string, label: string, o: FieldOptions = {}) => make('checkbox', name, label, o),
  checkboxList: (name: string, label: string, options: FormOption[], o: FieldOptions = {}) => make('checkbox_list', name, label, { ...o, options }),
};

export const options = (pairs: Record<string, string>): FormOption[] => Object.entries(pairs).map(([value, label]) => ({ value, label }));

/** The first construct in a builder's output that JSON cannot carry faithfully, as a path; null when clean. */
export function nonSerializablePath(value: unknown, path = 'form'): string | null {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = nonSerializablePath(value[i], `${path}[${i}]`);
      if (bad) return bad;
    }
    return null;
  }
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return path;
    for (const [k, v] of Object.entries(value)) {
      const bad = nonSerializablePath(v, `${path}.${k}`);
      if (bad) return bad;
    }
    return null;
  }
  // undefined, functions, symbols, bigints
  return path;
}

/** Rule problems in a definition: rules on a type that cannot carry them, unknown keys or targets. */
export function visibilityRuleProblems(fields: FormField[]): string[] {
  const names = new Set(fields.map((f) => f.name));
  const problems: string[] = [];
  for (const f of fields) {
    if (!f.visibility_rules) continue;
    if (!RULED_TYPES.has(f.type)) {
      problems.push(`${f.name}: visibility_rules are not allowed on ${f.type} fields`);
      continue;
    }
    const keys = f.type === 'checkbox' ? ['checked', 'unchecked'] : (f.options ?? []).map((o) => o.value);
    for (const [key, rule] of Object.entries(f.visibility_rules)) {
      if (!keys.includes(key)) problems.push(`${f.name}: visibility rule key '${key}' is not ${f.type === 'checkbox' ? 'checked or unchecked' : 'an option value'}`);
      for (const target of [...(rule.show ?? []), ...(rule.hide ?? [])]) {
        if (!names.has(target)) problems.push(`${f.name}: visibility rule names unknown field '${target}'`);
      }
    }
  }
  return problems;
}
