import { useState } from "preact/hooks";

/** The slice of JSON Schema the form understands; anything else is edited as JSON. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  anyOf?: JsonSchema[];
}

function kindOf(s: JsonSchema): "enum" | "boolean" | "integer" | "number" | "string" | "json" {
  if (s.enum) return "enum";
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== "null") : s.type;
  if (t === "boolean" || t === "integer" || t === "number" || t === "string") return t;
  return "json";
}

/**
 * A form for an object's properties, generated from its JSON Schema: a select for an enum,
 * a checkbox, number or text input for scalars, a JSON box for the rest. Only fields the
 * user set are sent, so the environment's own defaults apply to the others; the server
 * validates the result against the same schema.
 */
export function ArgsForm({ schema, idPrefix, onChange }: { schema: JsonSchema; idPrefix: string; onChange: (args: Record<string, unknown>, error: string | null) => void }) {
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const props = Object.entries(schema.properties ?? {});
  if (props.length === 0) return <p class="muted">This environment takes no arguments.</p>;

  const update = (name: string, value: string | boolean): void => {
    const next = { ...values, [name]: value };
    setValues(next);
    const args: Record<string, unknown> = {};
    let error: string | null = null;
    for (const [key, raw] of Object.entries(next)) {
      const s = schema.properties?.[key] ?? {};
      const kind = kindOf(s);
      if (raw === "") continue;
      if (kind === "boolean") args[key] = raw;
      else if (kind === "integer" || kind === "number") {
        const n = Number(raw);
        if (Number.isNaN(n)) error = `${key}: not a number`;
        else args[key] = n;
      } else if (kind === "enum") args[key] = s.enum?.find((v) => String(v) === raw) ?? raw;
      else if (kind === "json") {
        try {
          args[key] = JSON.parse(String(raw));
        } catch {
          error = `${key}: not valid JSON`;
        }
      } else args[key] = raw;
    }
    onChange(args, error);
  };

  return (
    <div class="args-form">
      {props.map(([name, s]) => {
        const id = `${idPrefix}-${name}`;
        const kind = kindOf(s);
        const hint = [s.description, s.default !== undefined ? `default ${JSON.stringify(s.default)}` : null, s.minimum !== undefined ? `≥ ${s.minimum}` : null, s.maximum !== undefined ? `≤ ${s.maximum}` : null]
          .filter(Boolean)
          .join(" · ");
        const value = values[name];
        return (
          <div class="field" key={name}>
            <label for={id}>
              {name}
              {schema.required?.includes(name) ? " *" : ""}
            </label>
            {kind === "enum" ? (
              <select id={id} value={String(value ?? "")} onChange={(e) => update(name, e.currentTarget.value)}>
                <option value="">(default)</option>
                {s.enum?.map((v) => (
                  <option key={String(v)} value={String(v)}>
                    {String(v)}
                  </option>
                ))}
              </select>
            ) : kind === "boolean" ? (
              <input id={id} type="checkbox" checked={value === true || (value === undefined && s.default === true)} onChange={(e) => update(name, e.currentTarget.checked)} />
            ) : kind === "json" ? (
              <textarea id={id} rows={2} placeholder={s.default !== undefined ? JSON.stringify(s.default) : "JSON"} value={String(value ?? "")} onInput={(e) => update(name, e.currentTarget.value)} />
            ) : (
              <input
                id={id}
                type={kind === "string" ? "text" : "number"}
                placeholder={s.default !== undefined ? String(s.default) : ""}
                value={String(value ?? "")}
                onInput={(e) => update(name, e.currentTarget.value)}
              />
            )}
            {hint ? <small class="muted">{hint}</small> : null}
          </div>
        );
      })}
    </div>
  );
}
