// The public surface of @kwire/consumer.
export {};
