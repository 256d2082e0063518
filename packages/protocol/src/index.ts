// The public surface of @kwire/protocol.
export {};
