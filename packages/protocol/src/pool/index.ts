export { BufferPool, defaultBufferPool, type BufferPoolOptions, type BufferPoolStats } from './buffer-pool.js';
