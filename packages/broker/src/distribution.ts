import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { BrokerError } from './errors.js';
import { cacheDir, pomFile, watchdogSource } from './paths.js';
import { atLeast, defaultKafkaVersion, parseKafkaVersion, type KafkaVersion } from './version.js';

const run = promisify(execFile);

/** A Kafka release assembled from Maven Central: every runtime jar of kafka_2.13 and kafka-tools. */
export interface KafkaDistribution {
  readonly version: KafkaVersion;
  /** The folder holding the jars. */
  readonly libDir: string;
  /** Classpath for `java -cp`: the jar folder plus the compiled watchdog. */
  readonly classpath: string;
  /** 3.9.x logs through reload4j (Log4j 1 syntax); 4.x through Log4j2. */
  readonly logging: 'log4j2' | 'reload4j';
}

export interface EnsureOptions {
  /** Progress lines (download start, time taken). */
  log?: (line: string) => void;
}

const MVN_ATTEMPTS = 3;

/**
 * Resolves the jars of one Kafka release into the git-ignored cache, once. The folder is written
 * under a temporary name and renamed when Maven has finished, so an interrupted download is never
 * mistaken for a complete one.
 */
export async function ensureKafka(versionText: string = defaultKafkaVersion(), options: EnsureOptions = {}): Promise<KafkaDistribution> {
  const version = parseKafkaVersion(versionText);
  const logging = atLeast(version, 4, 0) ? 'log4j2' : 'reload4j';
  const root = join(cacheDir(), 'kafka', version.text);
  const libDir = join(root, 'libs');
  if (!existsSync(join(root, 'complete'))) {
    const started = Date.now();
    options.log?.(`resolving Apache Kafka ${version.text} from Maven Central into ${libDir}`);
    await mkdir(root, { recursive: true });
    const staging = join(root, `libs.partial-${process.pid}-${randomBytes(3).toString('hex')}`);
    const args = ['-B', '-q', '-f', pomFile, 'dependency:copy-dependencies', `-Dkafka.version=${version.text}`, '-DincludeScope=runtime', `-DoutputDirectory=${staging}`];
    if (logging === 'reload4j') args.push('-Dkafka.logging=reload4j');
    try {
      // A fresh CI machine resolves several releases from the network mid-run: a failed resolution
      // (a dropped connection, a repository hiccup) is tried again twice before it counts.
      for (let attempt = 1; ; attempt++) {
        try {
          await run('mvn', args, { maxBuffer: 64 * 1024 * 1024 });
          break;
        } catch (err) {
          if ((err as { code?: unknown }).code === 'ENOENT' || attempt === MVN_ATTEMPTS) throw err;
          options.log?.(`mvn failed to resolve Kafka ${version.text} (attempt ${attempt} of ${MVN_ATTEMPTS}); trying again`);
          await rm(staging, { recursive: true, force: true });
          await new Promise((r) => setTimeout(r, 5_000 * attempt));
        }
      }
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      const e = err as { stdout?: string; stderr?: string; code?: unknown };
      const output = `${e.stdout ?? ''}${e.stderr ?? ''}`.trim().split('\n').slice(-30).join('\n');
      throw new BrokerError(e.code === 'ENOENT' ? 'mvn is not on the PATH: the launcher needs Apache Maven to fetch Kafka from Maven Central' : `mvn could not resolve Apache Kafka ${version.text}`, {
        cause: err,
        logTail: output,
      });
    }
    const jars = (await readdir(staging)).filter((f) => f.endsWith('.jar')).sort();
    if (!jars.some((j) => j.startsWith('kafka_2.13-')) || !jars.some((j) => j.startsWith('kafka-tools-'))) {
      throw new BrokerError(`Maven finished but ${staging} lacks the kafka_2.13 or kafka-tools jar`);
    }
    await rm(libDir, { recursive: true, force: true });
    await rename(staging, libDir);
    await writeFile(join(root, 'complete'), `${jars.join('\n')}\n`);
    options.log?.(`resolved ${jars.length} jars in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  const watchdogDir = await ensureWatchdog(options);
  return {
    version,
    libDir,
    classpath: [watchdogDir, join(libDir, '*')].join(delimiter),
    logging,
  };
}

async function ensureWatchdog(options: EnsureOptions): Promise<string> {
  return compileJava(watchdogSource, options);
}

/**
 * Compiles one self-contained Java source file (against Kafka's jars when `classpath` is given)
 * into <cache>/java/<name>-<hash of source>, once per source revision; returns the folder, for a
 * classpath. javac takes about a second.
 */
export async function compileJava(sourceFile: string, options: EnsureOptions & { classpath?: string } = {}): Promise<string> {
  const source = await readFile(sourceFile);
  const hash = createHash('sha256')
    .update(source)
    .update(options.classpath ?? '')
    .digest('hex')
    .slice(0, 16);
  const name = basename(sourceFile, '.java');
  const dir = join(cacheDir(), 'java', `${name}-${hash}`);
  if (existsSync(join(dir, `${name}.class`))) return dir;
  const staging = `${dir}.partial-${process.pid}`;
  await mkdir(staging, { recursive: true });
  try {
    await run('javac', ['--release', '17', '-d', staging, ...(options.classpath ? ['-cp', options.classpath] : []), sourceFile]);
  } catch (err) {
    const e = err as { stderr?: string; code?: unknown };
    throw new BrokerError(e.code === 'ENOENT' ? 'javac is not on the PATH: the launcher needs a JDK 17' : `javac failed on ${sourceFile}`, {
      cause: err,
      logTail: e.stderr,
    });
  }
  await rm(dir, { recursive: true, force: true });
  await rename(staging, dir).catch(async (err: NodeJS.ErrnoException) => {
    // Another process won the race and the folder exists: use theirs.
    if (!existsSync(join(dir, `${name}.class`))) throw err;
    await rm(staging, { recursive: true, force: true });
  });
  options.log?.(`compiled ${name}.java`);
  return dir;
}
