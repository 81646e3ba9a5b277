import { stringify } from "yaml";
import { AicrError } from "../core/errors.ts";
import type { ValueFlag } from "./_flag-spec.ts";
import type { Flags } from "./_flags.ts";

export type OutputFormat = "text" | "json" | "yaml";

/** `-o text|json|yaml` declared once for the commands that print a report. */
export const outputArg = {
  type: "enum",
  options: ["text", "json", "yaml"],
  alias: "o",
  description: "Output format: text (default), json or yaml",
} as const satisfies ValueFlag;

export function outputFormat(value: string | undefined): OutputFormat {
  const v = value ?? "text";
  if (v === "text" || v === "json" || v === "yaml") return v;
  throw new AicrError(
    "INVALID_REQUEST",
    `invalid --output ${JSON.stringify(v)}: expected text, json or yaml`,
    {
      remedy: "pass -o json or -o yaml for machine-readable output, or omit -o",
      context: { field: "--output", value: v },
    },
  );
}

/** The data as JSON or YAML, or `text()` for people. Always ends with a newline. */
export function render(format: OutputFormat, data: unknown, text: () => string): string {
  if (format === "json") return `${JSON.stringify(data, null, 2)}\n`;
  if (format === "yaml") return stringify(data);
  const t = text();
  return t.endsWith("\n") ? t : `${t}\n`;
}

/** `-o text|json` for the commands whose machine-readable form is JSON alone. */
export const textOrJsonArg = (description: string) =>
  ({
    type: "enum",
    options: ["text", "json"],
    alias: "o",
    description,
    valueHint: "json",
  }) as const satisfies ValueFlag;

/** The -o value of a textOrJsonArg flag, checked; `remedy` says what -o json prints there. */
export function textOrJson(flags: Flags, remedy: string): "text" | "json" {
  const output = flags.string("output") ?? "text";
  if (output === "text" || output === "json") return output;
  throw new AicrError(
    "INVALID_REQUEST",
    `invalid --output ${JSON.stringify(output)}: expected "json" or "text"`,
    {
      remedy,
      context: { field: "--output", value: output },
    },
  );
}
