// Every scenario of the differential suite, in the order the suite runs them.
import { basic } from './basic.js';
import { commits } from './commits.js';
import { control } from './control.js';
import { errors } from './errors.js';
import { groups } from './groups.js';
import type { Scenario } from './harness.js';
import { security } from './security.js';

export const scenarios: Scenario[] = [...basic, ...commits, ...control, ...errors, ...groups, ...security];
