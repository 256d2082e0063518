// Protocol conformance over captured traffic: the capture format `kwire record` writes, and the
// runner behind `kwire conformance` (decode, re-encode, compare bytes, check manifest facts).
// Reads files; opens no sockets.
export {
  CAPTURE_FORMAT,
  CAPTURE_FORMAT_VERSION,
  CAPTURE_INFO_FILE,
  INDEX_FILE,
  MANIFEST_FILE,
  SUITE_FILE,
  streamFileName,
  readCapture,
  StreamFile,
  type StreamKind,
  type CaptureInfo,
  type FrameRef,
  type RewriteRef,
  type ConnectionLine,
  type ListenerLine,
  type ExchangeLine,
  type CloseLine,
  type BlindLine,
  type IndexLine,
  type CaptureManifest,
  type ScenarioFacts,
  type RecordFact,
  type TopicRecordsFact,
  type GroupFact,
  type SuiteSettings,
  type Capture,
} from '../capture/format.js';
export { requestFieldAt, responseFieldAt, dataFieldAt, firstDifference, type FieldLocation } from './trace.js';
export { checkRecordBytes, type RecordsCheck, type SeenBatch, type SeenRecord } from './records.js';
export { checkExchange, sameValue, type ExchangeOutcome, type FrameOutcome, type FrameProblem, type ExchangeContext, type EmbeddedOutcome, type RecordsSeen } from './exchange.js';
export { FactCollector, type FactResult } from './facts.js';
export {
  runConformance,
  findCaptures,
  conformanceScope,
  type ConformanceOptions,
  type ConformanceReport,
  type CaptureReport,
  type TableRow,
  type Failure,
  type CoverageItem,
} from './runner.js';
export { formatReport, formatMarkdownTable } from './table.js';
export { runToolsConformance, findInputs, isPcapFile, PCAP_EXTENSIONS, type ToolsConformanceOptions } from './inputs.js';
