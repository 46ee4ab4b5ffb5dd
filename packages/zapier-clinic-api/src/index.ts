// What Zapier loads (through ../index.js): the definition as this environment configures it.
import { createApp } from './app';

export = createApp();
