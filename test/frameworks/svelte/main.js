import { mount } from 'svelte';
import App from './App.svelte';
import '../shared.ts';

mount(App, { target: document.getElementById('app') });
