// The recording proxy behind `kwire record`.
export { RecordingProxy, type RecordingProxyOptions, type ProxyStats } from './proxy.js';
export { rewriteAddresses, carriesAddresses, type Address, type AddressMapper, type Rewritten } from './rewrite.js';
export { parseRequestHead, type RequestHead } from './request-head.js';
export { parseAddress } from './address.js';
