# How results.json, report.md and chart.svg of this incomplete run were made from results/full-run.log (run as-is,
# with these paths, after python3 log2runs.py /tmp/wt12-full.log; variants.json = THROUGHPUT_VARIANTS ids and labels).
# Fallback: the full run's progress log -> RunRecords (count/bytes verified only; no checksums).
import re, json, sys
log = sys.argv[1]
scen = None; client = None; kind = None; runs = []; allocs = []
label2id = {}
for v in json.load(open('/tmp/variants.json')): label2id[v['label']] = v['id']
fam = {'kwire':'kwire','kafkajs':'kafkajs','@platformatic/kafka':'platformatic','node-rdkafka (librdkafka)':'rdkafka','Java consumer':'java','transport ceiling':'ceiling'}
for line in open(log):
    m = re.match(r'\[bench\] \[\d+/\d+(?:, [\d:]+)?\] (\S+): (.*?) \(([^()]*(?:\([^()]*\)[^()]*)*)\), 1 warm-up', line)
    if m:
        scen, lab = m.group(1), m.group(2); client = label2id.get(lab, lab); kind = 'throughput'; continue
    m = re.match(r'\[bench\] \[\d+/\d+(?:, [\d:]+)?\] (\S+): heap bytes per record, (.*)$', line)
    if m:
        scen, lab = m.group(1), m.group(2).strip(); client = label2id.get(lab, lab); kind = 'alloc'; continue
    m = re.match(r'\[bench\] \[\d+/\d+(?:, [\d:]+)?\] (\S+) rep (\d+)/\d+: (?:3 x )?(.*?)(?: while .*| joins a fresh group)?$', line)
    if m:
        scen, rep, lab = m.group(1), int(m.group(2)) - 1, m.group(3).strip(); client = fam.get(lab, lab); kind = 'rep'; continue
    if re.match(r'\[bench\] \[\d+/\d+(?:, [\d:]+)?\]', line): kind = None; continue
    if kind == 'throughput':
        m = re.search(r'pass (\d+): ([\d,]+) records/s \(([\d.]+) MiB/s\), ([\d.]+) s with connect/join, CPU ([\d.]+) s, RSS (\d+) MiB, verified', line)
        if m:
            runs.append(dict(scenario=scen, client=client, rep=int(m.group(1)) - 1, status='ok', records=None, expectedRecords=0, bytes=None, checksum=None,
                recordsPerSec=int(m.group(2).replace(',', '')), mbPerSec=float(m.group(3)), fetchSeconds=None, totalSeconds=float(m.group(4)), totalRecordsPerSec=None,
                cpuSeconds=float(m.group(5)), peakRssMb=int(m.group(6)), gcMs=None, maxEventLoopStallMs=None))
        elif 'FAILED' in line:
            runs.append(dict(scenario=scen, client=client, rep=0, status='failed', reason=line.split('FAILED:')[-1].strip(), records=None, expectedRecords=0, bytes=None, checksum=None, recordsPerSec=None, mbPerSec=None, fetchSeconds=None, totalSeconds=None, totalRecordsPerSec=None, cpuSeconds=None, peakRssMb=None, gcMs=None, maxEventLoopStallMs=None))
    elif kind == 'alloc':
        m = re.search(r'(\d+) B of heap per record', line)
        if m: allocs.append(dict(scenario=scen, client=client, allocBytesPerRecord=int(m.group(1)), windowRecords=0, collections=0))
json.dump({'runs': runs, 'allocs': allocs}, open('/tmp/fallback-runs.json', 'w'))
print(len(runs), len(allocs))
