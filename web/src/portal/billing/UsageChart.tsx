import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatKobo } from '../../components/format';
import type { UsageDay, UsageMetric, UsageType } from './usage';

const COLOURS = ['#1c7ed6', '#2f9e44', '#f08c00', '#ae3ec9', '#e03131', '#0c8599', '#5c940d', '#d6336c', '#7048e8', '#495057', '#f76707', '#1098ad', '#74b816', '#862e9c', '#c92a2a', '#364fc7'];

const shortDate = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
const dayLabel = (date: string) => shortDate.format(new Date(`${date}T00:00:00Z`));

/**
 * Checks (or naira) per day, stacked by type. recharts lives in this chunk only: the billing page
 * loads it when it has something to draw. The page's table under the chart says the same in text.
 */
export default function UsageChart({ days, types, metric }: { days: UsageDay[]; types: UsageType[]; metric: UsageMetric }) {
  const data = days.map((day) => {
    const row: Record<string, string | number> = { date: dayLabel(day.date) };
    for (const { type } of types) row[type] = metric === 'count' ? (day.byType[type]?.count ?? 0) : (day.byType[type]?.amount ?? 0) / 100;
    return row;
  });
  const value = (n: number) => (metric === 'count' ? n.toLocaleString('en-NG') : formatKobo(Math.round(n * 100)));
  return (
    <ResponsiveContainer width="100%" height={280}>
      <BarChart data={data} margin={{ top: 8, right: 8, left: 0, bottom: 0 }}>
        <CartesianGrid strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="date" fontSize={11} interval="preserveStartEnd" minTickGap={12} />
        <YAxis allowDecimals={metric === 'amount'} fontSize={11} width={metric === 'count' ? 36 : 64} tickFormatter={(n: number) => (metric === 'count' ? String(n) : `₦${n.toLocaleString('en-NG')}`)} />
        <Tooltip formatter={(n) => value(Number(n))} />
        <Legend wrapperStyle={{ fontSize: 12 }} />
        {types.map(({ type, label }, index) => (
          <Bar key={type} dataKey={type} name={label} stackId="usage" fill={COLOURS[index % COLOURS.length]} isAnimationActive={false} />
        ))}
      </BarChart>
    </ResponsiveContainer>
  );
}
