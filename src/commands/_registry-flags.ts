/** The registry connection flags of the commands that talk to a registry (image push, image verify). */
export const registryArgs = {
  username: {
    type: "string",
    description: "Registry user (default: from docker login)",
    valueHint: "user",
  },
  "password-stdin": { type: "boolean", description: "Read the password for --username from stdin" },
  "ca-file": {
    type: "string",
    description: "Also trust this CA (PEM) for the registry's TLS certificate",
    valueHint: "path",
  },
  "plain-http": {
    type: "boolean",
    description: "Speak plain HTTP (credentials only to a registry on this machine)",
  },
} as const;
