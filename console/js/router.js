// Hash routes: `#/cards/car_...?page=2`. The console is one page; the part after '#' says
// which view to show, so every view has a link that can be bookmarked and reloaded.

// The current route: {path: '/cards/car_...', query: {page: '2'}}.
export function current_route() {
  const hash = window.location.hash.replace(/^#/, '');
  const [path, search = ''] = hash.split('?');
  const query = Object.fromEntries(new URLSearchParams(search));
  return { path: path.startsWith('/') ? path : '/', query };
}

// href('/cards', {page: 2}) -> '#/cards?page=2'
export function href(path, query = {}) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== null && value !== undefined && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return `#${path}${text ? `?${text}` : ''}`;
}

export function go(path, query = {}) {
  const target = href(path, query);
  if (window.location.hash === target) {
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  } else {
    window.location.hash = target;
  }
}

// Routes: [['/cards/:id', page], ...]; the first whose pattern matches wins.
export function match(routes, path) {
  const parts = path.split('/').filter(Boolean);
  for (const [pattern, page] of routes) {
    const pattern_parts = pattern.split('/').filter(Boolean);
    if (pattern_parts.length !== parts.length) continue;
    const params = {};
    const matched = pattern_parts.every((part, index) => {
      if (part.startsWith(':')) {
        params[part.slice(1)] = decodeURIComponent(parts[index]);
        return true;
      }
      return part === parts[index];
    });
    if (matched) return { page, params };
  }
  return null;
}
