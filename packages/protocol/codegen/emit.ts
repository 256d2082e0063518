// Emits one TypeScript module per API (request and response) or per data structure, from the
// schema model: interfaces with the schema's field names in camelCase, and straight-line decode and
// encode functions with the version tests inline (`v >= 13`), so that the generated code reads like
// a hand-written codec and runs like one: no schema interpretation at run time.
import { contains, EMPTY, formatRange, intersect, isEmpty, type Range, type SchemaField, type SchemaMessage } from './schema.js';

const PRIMITIVES = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'int64', 'float64', 'uuid', 'string', 'bytes', 'records']);

interface StructModel {
  readonly tsName: string;
  readonly schemaName: string;
  readonly about: string;
  readonly fields: FieldModel[];
  /** Versions (within the message scope) in which the struct can appear. */
  readonly versions: Range;
}

interface FieldModel {
  readonly schema: SchemaField;
  readonly prop: string;
  readonly kind: 'prim' | 'array' | 'struct';
  /** The primitive, or the array's element primitive. */
  readonly prim: string | undefined;
  /** The struct, or the array's element struct. */
  readonly struct: StructModel | undefined;
  /** Versions in scope where the field is written in place. */
  readonly regular: Range;
  /** Versions in scope where the field is a tagged field. */
  readonly tagged: Range;
  /** Versions in scope where null is allowed. */
  readonly nullable: Range;
}

interface MessageContext {
  readonly message: SchemaMessage;
  readonly scope: Range;
  readonly flexible: Range;
  readonly structs: StructModel[];
  readonly commonUses: Map<string, Range>;
}

export function camel(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

function union(a: Range, b: Range): Range {
  if (isEmpty(a)) return b;
  if (isEmpty(b)) return a;
  if (a.hi + 1 < b.lo || b.hi + 1 < a.lo) throw new Error('non-contiguous version union');
  return { lo: Math.min(a.lo, b.lo), hi: Math.max(a.hi, b.hi) };
}

/** versions minus tagged, which must leave an interval (tagged versions are always a suffix). */
function minus(a: Range, b: Range): Range {
  if (isEmpty(b) || isEmpty(intersect(a, b))) return a;
  if (b.lo <= a.lo && b.hi >= a.hi) return EMPTY;
  if (b.lo > a.lo && b.hi >= a.hi) return { lo: a.lo, hi: b.lo - 1 };
  if (b.lo <= a.lo && b.hi < a.hi) return { lo: b.hi + 1, hi: a.hi };
  throw new Error('tagged versions split a field version range');
}

function hull(a: Range, b: Range): Range {
  if (isEmpty(a)) return b;
  if (isEmpty(b)) return a;
  return { lo: Math.min(a.lo, b.lo), hi: Math.max(a.hi, b.hi) };
}

/**
 * The versions in which each common struct is used, over all its uses: a struct shared by two
 * fields of different versions (AddPartitionsToTxn's V3AndBelowTopics 0-3 and Transactions' Topics
 * 4+) must be built for both, not only for the first use met.
 */
function commonStructUses(message: SchemaMessage, scope: Range): Map<string, Range> {
  const uses = new Map<string, Range>();
  const walk = (fields: SchemaField[], within: Range): void => {
    for (const f of fields) {
      const present = intersect(intersect(f.versions, scope), within);
      if (isEmpty(present)) continue;
      const base = f.type.startsWith('[]') ? f.type.slice(2) : f.type;
      const common = f.fields === undefined ? message.commonStructs.get(base) : undefined;
      if (common !== undefined) {
        const before = uses.get(base) ?? EMPTY;
        const after = hull(before, present);
        if (after.lo === before.lo && after.hi === before.hi) continue;
        uses.set(base, after);
        walk(common, after);
      } else if (f.fields !== undefined) {
        walk(f.fields, present);
      }
    }
  };
  walk(message.fields, scope);
  return uses;
}

function buildContext(message: SchemaMessage, scope: Range): MessageContext {
  const ctx: MessageContext = { message, scope, flexible: intersect(message.flexibleVersions, scope), structs: [], commonUses: commonStructUses(message, scope) };
  const top = buildStruct(ctx, message.name, message.name, 'The message body.', message.fields, scope);
  // The top-level struct first, then nested ones in the order they were met.
  ctx.structs.splice(ctx.structs.indexOf(top), 1);
  ctx.structs.unshift(top);
  return ctx;
}

function structTypeName(message: SchemaMessage, schemaName: string): string {
  if (schemaName === message.name) return schemaName;
  const base = message.name.replace(/(Request|Response)$/, '');
  return schemaName.startsWith(base) ? schemaName : `${message.name}${schemaName}`;
}

function buildStruct(ctx: MessageContext, schemaName: string, _parent: string, about: string, fields: SchemaField[], versions: Range): StructModel {
  const tsName = structTypeName(ctx.message, schemaName);
  if (ctx.structs.some((s) => s.tsName === tsName)) {
    if (ctx.message.commonStructs.has(schemaName)) return ctx.structs.find((s) => s.tsName === tsName)!;
    throw new Error(`${ctx.message.name}: struct ${schemaName} defined twice`);
  }
  const model: StructModel = { tsName, schemaName, about, fields: [], versions };
  ctx.structs.push(model);
  for (const f of fields) {
    const present = intersect(intersect(f.versions, ctx.scope), versions);
    if (isEmpty(present)) continue;
    const tagged = intersect(f.taggedVersions, present);
    const regular = minus(present, tagged);
    const nullable = intersect(f.nullableVersions, present);
    const isArray = f.type.startsWith('[]');
    const base = isArray ? f.type.slice(2) : f.type;
    let prim: string | undefined;
    let struct: StructModel | undefined;
    if (PRIMITIVES.has(base)) {
      prim = base;
    } else {
      const subFields = f.fields ?? ctx.message.commonStructs.get(base);
      if (!subFields) throw new Error(`${ctx.message.name}.${f.name}: unknown type ${f.type}`);
      struct = buildStruct(ctx, base, schemaName, f.about, subFields, f.fields === undefined ? (ctx.commonUses.get(base) ?? present) : present);
    }
    if (!isEmpty(tagged) && f.tag === undefined) throw new Error(`${ctx.message.name}.${f.name}: tagged without a tag`);
    model.fields.push({
      schema: f,
      prop: camel(f.name),
      kind: isArray ? 'array' : prim ? 'prim' : 'struct',
      prim,
      struct,
      regular,
      tagged,
      nullable,
    });
  }
  return model;
}

// ---------------------------------------------------------------- conditions on the version `v`

/** A JS condition true exactly for versions in `r`, knowing that v is within `within`. */
function cond(r: Range, within: Range): string {
  const x = intersect(r, within);
  if (isEmpty(x)) return 'false';
  if (x.lo <= within.lo && x.hi >= within.hi) return 'true';
  if (x.lo === x.hi) return `v === ${x.lo}`;
  if (x.lo <= within.lo) return `v <= ${x.hi}`;
  if (x.hi >= within.hi) return `v >= ${x.lo}`;
  return `v >= ${x.lo} && v <= ${x.hi}`;
}

function choose(c: string, a: string, b: string): string {
  if (c === 'true') return a;
  if (c === 'false') return b;
  return `(${c} ? ${a} : ${b})`;
}

// ---------------------------------------------------------------- types, defaults, sizes

function tsPrim(prim: string): string {
  switch (prim) {
    case 'bool':
      return 'boolean';
    case 'int64':
      return 'bigint';
    case 'uuid':
    case 'string':
      return 'string';
    case 'bytes':
    case 'records':
      return 'Buffer';
    default:
      return 'number';
  }
}

function tsType(f: FieldModel): string {
  const base = f.kind === 'prim' ? tsPrim(f.prim!) : f.kind === 'struct' ? f.struct!.tsName : `${f.prim ? tsPrim(f.prim) : f.struct!.tsName}[]`;
  return isEmpty(f.nullable) ? base : `${base} | null`;
}

function defaultExpr(f: FieldModel): string {
  const d = f.schema.default;
  if (d === 'null') return 'null';
  if (f.kind === 'array') return '[]';
  if (f.kind === 'struct') return `default${f.struct!.tsName}()`;
  switch (f.prim) {
    case 'bool':
      return d === 'true' ? 'true' : 'false';
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'float64':
      return d === undefined ? '0' : String(Number(d));
    case 'int64':
      return d === undefined ? '0n' : `${BigInt(d)}n`;
    case 'uuid':
      return 'ZERO_UUID';
    case 'string':
      return JSON.stringify(d ?? '');
    case 'bytes':
      return 'EMPTY_BYTES';
    case 'records':
      // Records are null by default where the schema lets them be (Fetch, Produce); ShareFetch's
      // are nullable only in v0, outside the scope, so there the default is empty.
      return isEmpty(f.nullable) ? 'EMPTY_BYTES' : 'null';
  }
  throw new Error(`no default for ${f.prim}`);
}

/** The fewest bytes a value can take in version v (for array fit checks). */
function minPrimSize(prim: string, flexible: boolean): number {
  switch (prim) {
    case 'bool':
    case 'int8':
      return 1;
    case 'int16':
    case 'uint16':
      return 2;
    case 'int32':
      return 4;
    case 'int64':
    case 'float64':
      return 8;
    case 'uuid':
      return 16;
    case 'string':
      return flexible ? 1 : 2;
    default:
      return flexible ? 1 : 4;
  }
}

function minStructSize(ctx: MessageContext, s: StructModel, v: number): number {
  const flexible = contains(ctx.flexible, v);
  let size = flexible ? 1 : 0;
  for (const f of s.fields) {
    if (!contains(f.regular, v)) continue;
    if (f.kind === 'prim') size += minPrimSize(f.prim!, flexible);
    else if (f.kind === 'array') size += flexible ? 1 : 4;
    else size += contains(f.nullable, v) ? 1 : minStructSize(ctx, f.struct!, v);
  }
  return size;
}

function minElementSize(ctx: MessageContext, f: FieldModel): number {
  let min = Infinity;
  for (let v = f.regular.lo; v <= Math.min(f.regular.hi, ctx.scope.hi); v++) {
    min = Math.min(min, f.prim ? minPrimSize(f.prim, contains(ctx.flexible, v)) : minStructSize(ctx, f.struct!, v));
  }
  for (let v = f.tagged.lo; v <= Math.min(f.tagged.hi, ctx.scope.hi); v++) {
    min = Math.min(min, f.prim ? minPrimSize(f.prim, true) : minStructSize(ctx, f.struct!, v));
  }
  if (!(min >= 1)) throw new Error(`${f.schema.name}: array elements can be empty; a count would be unbounded`);
  return min;
}

// ---------------------------------------------------------------- reading

function readPrim(prim: string, flex: string, nullable: string): string {
  switch (prim) {
    case 'bool':
      return 'r.readBool()';
    case 'int8':
      return 'r.readInt8()';
    case 'int16':
      return 'r.readInt16()';
    case 'uint16':
      return 'r.readUInt16()';
    case 'int32':
      return 'r.readInt32()';
    case 'int64':
      return 'r.readInt64()';
    case 'float64':
      return 'r.readFloat64()';
    case 'uuid':
      return 'r.readUuid()';
    case 'string':
      return choose(flex, choose(nullable, 'r.readCompactNullableString()', 'r.readCompactString()'), choose(nullable, 'r.readNullableString()', 'r.readString()'));
    case 'bytes':
    case 'records':
      return choose(flex, choose(nullable, 'r.readCompactNullableBytes()', 'r.readCompactBytes()'), choose(nullable, 'r.readNullableBytes()', 'r.readBytes()'));
  }
  throw new Error(`cannot read ${prim}`);
}

/** Statements that read field f (present in `within`) into the variable `target`. */
function readStatements(ctx: MessageContext, f: FieldModel, within: Range, target: string, indent: string): string[] {
  const flex = cond(ctx.flexible, within);
  const nullable = cond(f.nullable, within);
  if (f.kind === 'prim') return [`${indent}${target} = ${readPrim(f.prim!, flex, nullable)};`];
  if (f.kind === 'struct') {
    const read = `decode${f.struct!.tsName}(r, v)`;
    if (nullable === 'false') return [`${indent}${target} = ${read};`];
    // A nullable struct is prefixed by an int8 marker: -1 null, 1 present.
    return [`${indent}${target} = ${nullable === 'true' ? '' : `!(${nullable}) ? ${read} : `}r.readInt8() < 0 ? null : ${read};`];
  }
  const min = minElementSize(ctx, f);
  const lines = [`${indent}{`, `${indent}  const n = ${choose(flex, `r.readCompactArrayLength(${min})`, `r.readArrayLength(${min})`)};`];
  const nullBranch =
    nullable === 'false'
      ? `r.fail('null array where ${f.prop} is not nullable')`
      : nullable === 'true'
        ? `${target} = null`
        : `${target} = (${nullable}) ? null : r.fail('null array where ${f.prop} is not nullable')`;
  lines.push(`${indent}  if (n < 0) ${nullBranch};`);
  lines.push(`${indent}  else {`);
  lines.push(`${indent}    const a: ${f.prim ? tsPrim(f.prim) : f.struct!.tsName}[] = [];`);
  if (f.prim) {
    lines.push(`${indent}    for (let i = 0; i < n; i++) a.push(${readPrim(f.prim, flex, 'false')});`);
  } else {
    lines.push(`${indent}    for (let i = 0; i < n; i++) {`);
    lines.push(`${indent}      try {`);
    lines.push(`${indent}        a.push(decode${f.struct!.tsName}(r, v));`);
    lines.push(`${indent}      } catch (e) {`);
    lines.push(`${indent}        throw atPath(e, i);`);
    lines.push(`${indent}      }`);
    lines.push(`${indent}    }`);
  }
  lines.push(`${indent}    ${target} = a;`);
  lines.push(`${indent}  }`);
  lines.push(`${indent}}`);
  return lines;
}

function emitDecoder(ctx: MessageContext, s: StructModel): string[] {
  const within = s.versions;
  const canFlex = !isEmpty(intersect(ctx.flexible, within));
  const out: string[] = [];
  out.push(`function decode${s.tsName}(r: Reader, v: number): ${s.tsName} {`);
  out.push(`  let f = '';`);
  out.push(`  try {`);
  // Locals are $-prefixed so that no field name can clash with the decoder's own variables.
  for (const f of s.fields) {
    out.push(`    let $${f.prop}: ${tsType(f)};`);
  }
  for (const f of s.fields) {
    const c = cond(f.regular, within);
    out.push(`    f = '${f.prop}';`);
    if (c === 'false') {
      out.push(`    $${f.prop} = ${defaultExpr(f)};`);
    } else if (c === 'true') {
      out.push(...readStatements(ctx, f, f.regular, `$${f.prop}`, '    '));
    } else {
      out.push(`    if (${c}) {`);
      out.push(...readStatements(ctx, f, f.regular, `$${f.prop}`, '      '));
      out.push(`    } else {`);
      out.push(`      $${f.prop} = ${defaultExpr(f)};`);
      out.push(`    }`);
    }
  }
  if (canFlex) {
    const taggedFields = s.fields.filter((f) => !isEmpty(f.tagged));
    out.push(`    let unknown: TaggedField[] | undefined;`);
    const fc = cond(ctx.flexible, within);
    out.push(fc === 'true' ? `    {` : `    if (${fc}) {`);
    out.push(`      f = '';`);
    out.push(`      const count = r.readUVarint();`);
    out.push(`      let previous = -1;`);
    out.push(`      for (let i = 0; i < count; i++) {`);
    out.push(`        const [tag, end] = readTagHeader(r, previous);`);
    out.push(`        previous = tag;`);
    let first = true;
    for (const f of taggedFields) {
      const c = cond(f.tagged, within);
      out.push(`        ${first ? '' : '} else '}if (tag === ${f.schema.tag}${c === 'true' ? '' : ` && ${c}`}) {`);
      out.push(`          const outer = r.end;`);
      out.push(`          r.end = end;`);
      out.push(`          f = '${f.prop}';`);
      out.push(...readStatements(ctx, f, f.tagged, `$${f.prop}`, '          '));
      out.push(`          endTag(r, tag, end, outer);`);
      first = false;
    }
    out.push(`        ${first ? '' : '} else '}{`);
    out.push(`          (unknown ??= []).push({ tag, data: r.readRaw(end - r.offset) });`);
    out.push(`        }`);
    out.push(`      }`);
    out.push(`    }`);
  }
  out.push(`    const o: ${s.tsName} = { ${s.fields.map((f) => `${f.prop}: $${f.prop}`).join(', ')} };`);
  if (canFlex) out.push(`    if (unknown !== undefined) o[unknownTaggedFields] = unknown;`);
  out.push(`    return o;`);
  out.push(`  } catch (e) {`);
  out.push(`    throw atPath(e, f);`);
  out.push(`  }`);
  out.push(`}`);
  // Fields absent from the version being decoded take their defaults, so a decoded body always has
  // every property, whatever the version.
  return out;
}

// ---------------------------------------------------------------- writing

function writePrim(prim: string, x: string, flex: string, nullable: string, w = 'w'): string {
  // Where null is allowed in some versions only, the caller has already rejected it for the others.
  const nx = nullable === 'false' || nullable === 'true' ? x : `${x}!`;
  switch (prim) {
    case 'bool':
      return `${w}.writeBool(${x})`;
    case 'int8':
      return `${w}.writeInt8(${x})`;
    case 'int16':
      return `${w}.writeInt16(${x})`;
    case 'uint16':
      return `${w}.writeUInt16(${x})`;
    case 'int32':
      return `${w}.writeInt32(${x})`;
    case 'int64':
      return `${w}.writeInt64(${x})`;
    case 'float64':
      return `${w}.writeFloat64(${x})`;
    case 'uuid':
      return `${w}.writeUuid(${x})`;
    case 'string':
      return choose(flex, choose(nullable, `${w}.writeCompactNullableString(${x})`, `${w}.writeCompactString(${nx})`), choose(nullable, `${w}.writeNullableString(${x})`, `${w}.writeString(${nx})`));
    case 'bytes':
    case 'records':
      return choose(flex, choose(nullable, `${w}.writeCompactNullableBytes(${x})`, `${w}.writeCompactBytes(${nx})`), choose(nullable, `${w}.writeNullableBytes(${x})`, `${w}.writeBytes(${nx})`));
  }
  throw new Error(`cannot write ${prim}`);
}

function canBeNull(f: FieldModel): boolean {
  return f.kind !== 'prim' || ['string', 'bytes', 'records'].includes(f.prim!);
}

/** Statements writing the value `x` (already defaulted) of field f, for versions in `within`. */
function writeStatements(ctx: MessageContext, f: FieldModel, within: Range, x: string, indent: string, w = 'w'): string[] {
  const flex = cond(ctx.flexible, within);
  const nullable = cond(f.nullable, within);
  const lines: string[] = [];
  const guardNull = (ind: string) => {
    if (!canBeNull(f) || nullable === 'true') return;
    lines.push(`${ind}if (${x} === null${nullable === 'false' ? '' : ` && !(${nullable})`}) nullNotAllowed('${f.prop}', v);`);
  };
  if (f.kind === 'prim') {
    guardNull(indent);
    lines.push(`${indent}${writePrim(f.prim!, x, flex, nullable, w)};`);
    return lines;
  }
  if (f.kind === 'struct') {
    const enc = `encode${f.struct!.tsName}(${w}, ${x}, v)`;
    if (nullable === 'false') {
      guardNull(indent);
      lines.push(`${indent}${enc};`);
      return lines;
    }
    guardNull(indent);
    lines.push(`${indent}if (${x} === null) ${w}.writeInt8(-1);`);
    lines.push(`${indent}else {`);
    lines.push(`${indent}  ${w}.writeInt8(1);`);
    lines.push(`${indent}  ${enc};`);
    lines.push(`${indent}}`);
    return lines;
  }
  guardNull(indent);
  lines.push(`${indent}if (${x} === null) ${choose(flex, `${w}.writeCompactArrayLength(-1)`, `${w}.writeArrayLength(-1)`)};`);
  lines.push(`${indent}else {`);
  lines.push(`${indent}  ${choose(flex, `${w}.writeCompactArrayLength(${x}.length)`, `${w}.writeArrayLength(${x}.length)`)};`);
  if (f.prim) {
    lines.push(`${indent}  for (const e of ${x}) ${writePrim(f.prim, 'e', flex, 'false', w)};`);
  } else {
    lines.push(`${indent}  for (let i = 0; i < ${x}.length; i++) {`);
    lines.push(`${indent}    try {`);
    lines.push(`${indent}      encode${f.struct!.tsName}(${w}, ${x}[i]!, v);`);
    lines.push(`${indent}    } catch (e) {`);
    lines.push(`${indent}      throw atPath(e, i);`);
    lines.push(`${indent}    }`);
    lines.push(`${indent}  }`);
  }
  lines.push(`${indent}}`);
  return lines;
}

/** A condition that is true when the (defaulted) value x differs from the field's default. */
function differsFromDefault(f: FieldModel, x: string): string {
  const d = f.schema.default;
  if (d === 'null') return `${x} !== null`;
  if (f.kind === 'array') return `(${x} === null || ${x}.length > 0)`;
  if (f.kind === 'struct') return `(${x} === null || !isDefault${f.struct!.tsName}(${x}))`;
  switch (f.prim) {
    case 'bytes':
      return `(${x} === null || ${x}.length > 0)`;
    case 'records':
      return `${x} !== null`;
    case 'int64':
      // != so that a number input compares with the bigint default.
      return `${x} != ${defaultExpr(f)}`;
    default:
      return `${x} !== ${defaultExpr(f)}`;
  }
}

function wrap(expr: string): string {
  return expr.startsWith('(') && expr.endsWith(')') ? expr : `(${expr})`;
}

function fieldValue(f: FieldModel): string {
  return `(s.${f.prop} === undefined ? ${defaultExpr(f)} : s.${f.prop})`;
}

function emitEncoder(ctx: MessageContext, s: StructModel): string[] {
  const within = s.versions;
  const canFlex = !isEmpty(intersect(ctx.flexible, within));
  const out: string[] = [];
  out.push(`function encode${s.tsName}(w: Writer, s: Input<${s.tsName}>, v: number): void {`);
  out.push(`  let f = '';`);
  out.push(`  try {`);
  for (const f of s.fields) {
    const c = cond(f.regular, within);
    if (c === 'false') continue;
    const ind = '      ';
    out.push(c === 'true' ? `    {` : `    if (${c}) {`);
    out.push(`${ind}f = '${f.prop}';`);
    out.push(`${ind}const x = ${fieldValue(f)};`);
    out.push(...writeStatements(ctx, f, f.regular, 'x', ind));
    out.push(`    }`);
  }
  if (canFlex) {
    const fc = cond(ctx.flexible, within);
    const ind = fc === 'true' ? '    ' : '      ';
    if (fc !== 'true') out.push(`    if (${fc}) {`);
    const taggedFields = s.fields.filter((f) => !isEmpty(f.tagged));
    if (taggedFields.length === 0) {
      out.push(`${ind}f = '';`);
      out.push(`${ind}writeTaggedFields(w, null, (s as WithUnknownTags)[unknownTaggedFields]);`);
    } else {
      out.push(`${ind}const tags: TaggedWrite[] = [];`);
      for (const f of taggedFields) {
        const c = cond(f.tagged, within);
        const ind2 = c === 'true' ? ind : `${ind}  `;
        if (c !== 'true') out.push(`${ind}if (${c}) {`);
        out.push(`${ind2}f = '${f.prop}';`);
        out.push(`${ind2}const $${f.prop} = ${fieldValue(f)};`);
        out.push(`${ind2}if (${differsFromDefault(f, `$${f.prop}`)}) {`);
        out.push(`${ind2}  tags.push([${f.schema.tag}, (t) => {`);
        out.push(...writeStatements(ctx, f, f.tagged, `$${f.prop}`, `${ind2}    `, 't'));
        out.push(`${ind2}  }]);`);
        out.push(`${ind2}}`);
        if (c !== 'true') out.push(`${ind}}`);
      }
      out.push(`${ind}f = '';`);
      out.push(`${ind}writeTaggedFields(w, tags, (s as WithUnknownTags)[unknownTaggedFields]);`);
    }
    if (fc !== 'true') out.push(`    }`);
  }
  out.push(`  } catch (e) {`);
  out.push(`    throw atPath(e, f);`);
  out.push(`  }`);
  out.push(`}`);
  return out;
}

// ---------------------------------------------------------------- defaults as code

function emitDefaults(ctx: MessageContext, s: StructModel): string[] {
  const canFlex = !isEmpty(intersect(ctx.flexible, s.versions));
  const out: string[] = [];
  out.push(`function default${s.tsName}(): ${s.tsName} {`);
  out.push(`  return { ${s.fields.map((f) => `${f.prop}: ${defaultExpr(f)}`).join(', ')} };`);
  out.push(`}`);
  out.push('');
  out.push(`function isDefault${s.tsName}(s: Input<${s.tsName}>): boolean {`);
  const checks = s.fields.map((f) => `(s.${f.prop} === undefined || !${wrap(differsFromDefault(f, `s.${f.prop}`))})`);
  if (canFlex) checks.push(`(s as WithUnknownTags)[unknownTaggedFields] === undefined`);
  out.push(`  return ${checks.length ? checks.join(' &&\n    ') : 'true'};`);
  out.push(`}`);
  return out;
}

// ---------------------------------------------------------------- types and grammar comment

function wireType(ctx: MessageContext, f: FieldModel): string {
  const base = f.kind === 'array' ? `[]${f.prim ?? f.struct!.schemaName}` : f.kind === 'struct' ? f.struct!.schemaName : f.prim!;
  const notes: string[] = [];
  if (!isEmpty(f.nullable)) notes.push(`nullable v${formatRange(clip(f.nullable, ctx.scope))}`);
  if (!isEmpty(f.tagged)) notes.push(`tag ${f.schema.tag}`);
  const versions = clip(union(f.regular, f.tagged), ctx.scope);
  return `${base}${notes.length ? ` (${notes.join(', ')})` : ''} v${formatRange(versions)}`;
}

function clip(r: Range, scope: Range): Range {
  // Show "13+" rather than "13-18" when the range runs to the schema's open end.
  return r.hi >= scope.hi ? { lo: r.lo, hi: Infinity } : r;
}

function grammar(ctx: MessageContext, s: StructModel, depth: number, out: string[]): void {
  for (const f of s.fields) {
    out.push(` * ${'  '.repeat(depth)}${f.schema.name}: ${wireType(ctx, f)}`);
    if (f.struct && f.struct.fields.length) grammar(ctx, f.struct, depth + 1, out);
  }
}

function emitInterface(ctx: MessageContext, s: StructModel): string[] {
  const canFlex = !isEmpty(intersect(ctx.flexible, s.versions));
  const out: string[] = [];
  if (s.about) out.push(`/** ${s.about.replace(/\*\//g, '*\\/')} */`);
  out.push(`export interface ${s.tsName} {`);
  for (const f of s.fields) {
    const about = f.schema.about.replace(/\*\//g, '*\\/');
    out.push(`  /** ${about}${about.endsWith('.') ? '' : '.'} ${wireType(ctx, f)} */`);
    out.push(`  ${f.prop}: ${tsType(f)};`);
  }
  if (canFlex) out.push(`  [unknownTaggedFields]?: TaggedField[];`);
  out.push(`}`);
  return out;
}

function emitMessage(ctx: MessageContext): { types: string[]; code: string[]; grammar: string[] } {
  const types: string[] = [];
  const code: string[] = [];
  for (const s of ctx.structs) {
    types.push(...emitInterface(ctx, s), '');
  }
  for (const s of [...ctx.structs].reverse()) {
    code.push(...emitDecoder(ctx, s), '');
    code.push(...emitEncoder(ctx, s), '');
    if (s !== ctx.structs[0]) code.push(...emitDefaults(ctx, s), '');
  }
  const g: string[] = [];
  g.push(` * ${ctx.message.name} (v${formatRange(ctx.scope)}${isEmpty(ctx.flexible) ? ', never flexible' : `, flexible v${formatRange(clip(ctx.flexible, ctx.scope))}`}):`);
  grammar(ctx, ctx.structs[0]!, 1, g);
  return { types, code, grammar: g };
}

// ---------------------------------------------------------------- modules

// The standard marker of generated files (`^// Code generated .* DO NOT EDIT\.$`, which editors and
// review tools recognise), with a hash of the schema texts the file came from.
const HEADER = (sources: string, kafkaVersion: string, schemasHash: string) =>
  `// Code generated by packages/protocol/codegen from ${sources} of Apache Kafka ${kafkaVersion} (schemas sha256 ${schemasHash}). DO NOT EDIT.\n// Change the generator (or its scope) and run \`pnpm --filter @kwire/protocol generate\`.\n`;

function imports(code: string, runtimeModule = './runtime.js'): string {
  const used = (name: string) => new RegExp(`\\b${name}\\b`).test(code);
  const runtime = ['EMPTY_BYTES', 'endTag', 'nullNotAllowed', 'readTagHeader', 'unknownTaggedFields', 'writeTaggedFields'].filter(used);
  const runtimeTypes = ['ApiDefinition', 'DataDefinition', 'Input', 'TaggedField', 'TaggedWrite', 'WithUnknownTags'].filter(used);
  const lines = [
    `import { atPath, KafkaProtocolError, toProtocolError } from '../errors.js';`,
    `import type { Reader } from '../primitives/reader.js';`,
    `import type { Writer } from '../primitives/writer.js';`,
  ];
  if (used('ZERO_UUID')) lines.push(`import { ZERO_UUID } from '../primitives/uuid.js';`);
  if (runtime.length) lines.push(`import { ${runtime.join(', ')} } from '${runtimeModule}';`);
  if (runtimeTypes.length) lines.push(`import type { ${runtimeTypes.join(', ')} } from '${runtimeModule}';`);
  return `${lines.join('\n')}\n`;
}

function topLevel(kind: 'encode' | 'decode', typeName: string, apiKey: number | undefined, min: number, max: number): string[] {
  const where = apiKey === undefined ? '' : `.inApi(${apiKey}, '${typeName}', version)`;
  const check = [
    `  if (!(version >= ${min} && version <= ${max})) {`,
    `    throw new KafkaProtocolError(\`${typeName} v\${version} is not implemented (kwire: v${min}-${max})\`, { reason: 'unsupported-version' })${where};`,
    `  }`,
  ];
  if (kind === 'decode') {
    return [
      `/** Decodes a ${typeName} body (no frame, no header) of the given version. */`,
      `export function decode${typeName}(r: Reader, version: number): ${typeName} {`,
      ...check,
      `  try {`,
      `    return decode${typeName}Body(r, version);`,
      `  } catch (e) {`,
      `    throw toProtocolError(e)${where};`,
      `  }`,
      `}`,
    ];
  }
  return [
    `/** Encodes a ${typeName} body (no frame, no header); fields left out take their defaults. */`,
    `export function encode${typeName}(w: Writer, body: Input<${typeName}>, version: number): void {`,
    ...check,
    `  try {`,
    `    encode${typeName}Body(w, body, version);`,
    `  } catch (e) {`,
    `    throw toProtocolError(e)${where};`,
    `  }`,
    `}`,
  ];
}

function renameTop(code: string[], typeName: string): string[] {
  // The struct-level functions of the top-level message become *Body; exported wrappers check the
  // version and label errors with the API.
  return code.map((l) =>
    l.replace(new RegExp(`^function decode${typeName}\\(`), `function decode${typeName}Body(`).replace(new RegExp(`^function encode${typeName}\\(`), `function encode${typeName}Body(`),
  );
}

export interface ApiModuleInput {
  request: SchemaMessage;
  response: SchemaMessage;
  name: string;
  min: number;
  max: number;
  kafkaVersion: string;
  /** Where the generated module finds runtime.ts (src/all-apis reaches into src/messages). */
  runtimeModule?: string;
  /** sha256 of the schema files the module comes from (the first 16 hex digits). */
  schemasHash: string;
}

export function emitApiModule(input: ApiModuleInput): string {
  const { request, response, name, min, max } = input;
  const scope: Range = { lo: min, hi: max };
  for (const m of [request, response]) {
    if (min < m.validVersions.lo || max > m.validVersions.hi) {
      throw new Error(`${m.name}: scope v${min}-${max} outside the schema's valid versions ${formatRange(m.validVersions)}`);
    }
  }
  if (request.apiKey !== response.apiKey) throw new Error(`${name}: request and response api keys differ`);
  const req = emitMessage(buildContext(request, scope));
  const res = emitMessage(buildContext(response, scope));
  const flexibleFrom = isEmpty(request.flexibleVersions) ? 'Infinity' : String(request.flexibleVersions.lo);
  const body: string[] = [];
  body.push('/**');
  body.push(` * ${name} (api key ${request.apiKey}), versions ${min}-${max}.`);
  body.push(' *');
  body.push(...req.grammar);
  body.push(' *');
  body.push(...res.grammar);
  body.push(' */');
  body.push('');
  body.push(...req.types, ...res.types);
  body.push(...renameTop(req.code, request.name), ...renameTop(res.code, response.name));
  body.push(...topLevel('decode', request.name, request.apiKey, min, max), '');
  body.push(...topLevel('encode', request.name, request.apiKey, min, max), '');
  body.push(...topLevel('decode', response.name, request.apiKey, min, max), '');
  body.push(...topLevel('encode', response.name, request.apiKey, min, max), '');
  body.push(`export const ${name}: ApiDefinition<${request.name}, ${response.name}> = {`);
  body.push(`  apiKey: ${request.apiKey},`);
  body.push(`  name: '${name}',`);
  body.push(`  minVersion: ${min},`);
  body.push(`  maxVersion: ${max},`);
  body.push(`  flexibleFrom: ${flexibleFrom},`);
  body.push(`  encodeRequest: encode${request.name},`);
  body.push(`  decodeRequest: decode${request.name},`);
  body.push(`  encodeResponse: encode${response.name},`);
  body.push(`  decodeResponse: decode${response.name},`);
  body.push('};');
  const code = `${body.join('\n')}\n`;
  return `${HEADER(`${request.name}.json and ${response.name}.json`, input.kafkaVersion, input.schemasHash)}\n${imports(code, input.runtimeModule)}\n${code}`;
}

export function emitDataModule(message: SchemaMessage, min: number, max: number, kafkaVersion: string, schemasHash: string): string {
  const scope: Range = { lo: min, hi: max };
  if (min < message.validVersions.lo || max > message.validVersions.hi) throw new Error(`${message.name}: scope outside valid versions`);
  const m = emitMessage(buildContext(message, scope));
  const body: string[] = ['/**', ...m.grammar, ' */', '', ...m.types, ...renameTop(m.code, message.name)];
  body.push(...topLevel('decode', message.name, undefined, min, max), '');
  body.push(...topLevel('encode', message.name, undefined, min, max), '');
  body.push(`export const ${message.name}Data: DataDefinition<${message.name}> = {`);
  body.push(`  name: '${message.name}',`);
  body.push(`  minVersion: ${min},`);
  body.push(`  maxVersion: ${max},`);
  body.push(`  encode: encode${message.name},`);
  body.push(`  decode: decode${message.name},`);
  body.push('};');
  const code = `${body.join('\n')}\n`;
  return `${HEADER(`${message.name}.json`, kafkaVersion, schemasHash)}\n${imports(code)}\n${code}`;
}
