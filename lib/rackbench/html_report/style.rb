# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # The page's stylesheet: system fonts only (no web font to fetch),
    # readable on a laptop, wide tables scroll sideways on their own.
    STYLE = <<~CSS
      :root { color-scheme: light; --ink: #1f2328; --muted: #5f6670; --rule: #d8dde3; --band: #f6f8fa; }
      * { box-sizing: border-box; }
      body { margin: 0 auto; max-width: 1240px; padding: 24px 28px 48px; color: var(--ink);
             font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
      h1 { font-size: 24px; margin: 0 0 4px; }
      h2 { font-size: 18px; margin: 36px 0 4px; padding-top: 12px; border-top: 1px solid var(--rule); }
      .meta, .how, .note, footer { color: var(--muted); }
      .how { margin: 0 0 12px; max-width: 900px; }
      .note { font-size: 12px; }
      nav { margin: 12px 0; font-size: 13px; }
      nav a { margin-right: 14px; color: #0b5cad; text-decoration: none; }
      nav a:hover { text-decoration: underline; }
      .warnings { background: #fff8e1; border: 1px solid #f0d78c; border-radius: 6px; padding: 8px 14px 8px 32px; }
      .empty { color: var(--muted); font-style: italic; }
      .chart { overflow-x: auto; min-height: 40px; }
      .scroll { overflow-x: auto; }
      table { border-collapse: collapse; font-size: 12.5px; }
      th, td { padding: 4px 8px; border-bottom: 1px solid var(--rule); vertical-align: top; text-align: left; }
      th { background: var(--band); position: sticky; top: 0; white-space: nowrap; }
      td.num, th.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
      tbody tr:nth-child(even) { background: #fbfcfd; }
      .noise, .headline { font-weight: 600; }
      .verdict { display: inline-block; border-left: 4px solid; padding-left: 6px; white-space: nowrap; }
      ul.flags { margin: 0; padding-left: 16px; min-width: 280px; }
      .reason { white-space: pre-wrap; font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
      pre { background: var(--band); border: 1px solid var(--rule); border-radius: 6px; padding: 10px 12px;
            overflow-x: auto; font: 12.5px/1.45 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
      dl.settings { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
      dl.settings dt { color: var(--muted); }
      dl.settings dd { margin: 0; }
      footer { margin-top: 40px; font-size: 12px; border-top: 1px solid var(--rule); padding-top: 8px; }
    CSS
  end
end
