// @kwire/tools: Kafka protocol tools on kwire's codec (the whole protocol, @kwire/protocol/all-apis):
// the recording proxy, the capture format, the conformance runner, the decoder and pcap reading.
export { decodeConversation, splitFrames, summarize, type Conversation, type StreamBytes, type DecodedFrame, type DecodeOptions, type DecodeSummary } from './decode/decoder.js';
export { recordsJson } from './decode/records.js';
export { captureConversations } from './decode/capture-source.js';
export { toJson, bytesJson, int64Json, type Json } from './json.js';
export { readSource, type Source } from './sources.js';
export { readPackets, isPcap, PcapFormatError, type Packet } from './pcap/reader.js';
export { tcpSegment, reassemble, type Segment, type Reassembled } from './pcap/tcp.js';
export { pcapConversations, conversationsFromPackets, type PcapOptions } from './pcap/conversations.js';
export { writeCapture } from './pcap/to-capture.js';
// The capture format (read: capture/format.ts, written: capture/writer.ts) and the conformance runner.
export * from './conformance/index.js';
export { CaptureWriter, AppendFile } from './capture/writer.js';
// The recording proxy behind `kwire record`.
export * from './record/index.js';
