// Money, events: every state change of the tenant, newest first, filterable by type.
import { h, field, input, section, id_text } from '../dom.js';
import { time } from '../components.js';
import { paged_table, load_into } from '../ui.js';
import { go } from '../router.js';

export const title = 'Events';

export async function render(context) {
  const { route } = context;
  const type = input('type', { placeholder: 'collection.* or collection.paid', value: route.query.type ?? '' });
  const filter = h('form', { class: 'filters', 'aria-label': 'Filter events' }, field('Type', type),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Filter')));
  filter.addEventListener('submit', (event) => {
    event.preventDefault();
    go('/events', { type: type.value.trim() });
  });
  const list = h('div', { id: 'event-list' });
  await load_into(list, () => paged_table({
    path: '/v1/events',
    plural: 'events',
    query: route.query.type ? { type: route.query.type } : {},
    caption: 'Events, newest first',
    route,
    empty: 'No events match.',
    columns: [
      ['Type', (event) => event.type],
      ['When', (event) => time(event.timestamp)],
      ['Id', (event) => id_text(event.id)],
      ['Data', (event) => h('details', {}, h('summary', {}, 'Show data'),
        h('pre', { class: 'json' }, JSON.stringify(event.data, null, 2)))],
    ],
  }));
  return h('div', {}, h('h1', {}, 'Events'), section('Events', filter, list));
}
