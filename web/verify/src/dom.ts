/**
 * A few lines instead of a framework: elements are built with `h`, text always goes in as text
 * nodes (never as markup), so names and messages from the server cannot become HTML.
 */

type Child = Node | string | number | null | undefined | false | readonly Child[];

interface Props {
  class?: string;
  /** Attributes, set as given (`aria-*`, `type`, `for`, ...); `false`/`null` leaves one out. */
  attrs?: Record<string, string | number | boolean | null | undefined>;
  on?: Partial<{ [K in keyof HTMLElementEventMap]: (event: HTMLElementEventMap[K]) => void }>;
}

function append(parent: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) {
    for (const item of child as readonly Child[]) append(parent, item);
    return;
  }
  parent.appendChild(typeof child === 'object' ? (child as Node) : document.createTextNode(String(child)));
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props?.class) element.className = props.class;
  for (const [name, value] of Object.entries(props?.attrs ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const [name, listener] of Object.entries(props?.on ?? {})) element.addEventListener(name, listener as EventListener);
  append(element, children);
  return element;
}

export function button(label: string, onClick: () => void, variant: 'primary' | 'secondary' | 'link' = 'primary'): HTMLButtonElement {
  return h('button', { class: `button ${variant}`, attrs: { type: 'button' }, on: { click: onClick } }, label);
}

/** Shows progress on a button while `work` runs, and keeps it from being pressed twice. */
export async function busy<T>(control: HTMLButtonElement, label: string, work: () => Promise<T>): Promise<T> {
  const before = control.textContent;
  control.disabled = true;
  control.setAttribute('aria-busy', 'true');
  control.textContent = label;
  try {
    return await work();
  } finally {
    control.disabled = false;
    control.removeAttribute('aria-busy');
    control.textContent = before;
  }
}

let idCounter = 0;
export function uniqueId(prefix: string): string {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}
