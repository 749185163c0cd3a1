import { createApp } from 'vue';
import App from './App.vue';
import '../shared.ts';

createApp(App).mount('#app');
