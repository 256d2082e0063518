// The public surface of @kwire/bench.
export {};
