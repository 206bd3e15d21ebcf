/**
 * Money is stored as integer minor units with a three-letter currency code beside it (DESIGN 6). How
 * many decimals a currency's minor unit has (2 for USD, 0 for JPY, 3 for KWD) comes from the runtime's
 * ISO 4217 data, so prices are typed and shown as people write them ("12.50") and stored as 1250.
 */

const KNOWN_CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** Whether a code (any case) is an ISO 4217 currency the runtime knows. */
export function isCurrencyCode(code: string): boolean {
  return /^[A-Za-z]{3}$/.test(code) && KNOWN_CURRENCIES.has(code.toUpperCase());
}

/** Decimal places of the currency's minor unit; 2 for a code the runtime does not know. */
export function currencyDigits(currency: string): number {
  if (!isCurrencyCode(currency)) return 2;
  return new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() }).resolvedOptions().maximumFractionDigits ?? 2;
}

/** Minor units as the decimal an admin types: 1250 USD → "12.50", 1200 JPY → "1200". */
export function minorToDecimal(minor: number, currency: string): string {
  const digits = currencyDigits(currency);
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  if (digits === 0) return `${sign}${abs}`;
  const scale = 10 ** digits;
  return `${sign}${Math.floor(abs / scale)}.${String(abs % scale).padStart(digits, '0')}`;
}

/** Minor units shown with the currency's symbol: 1250 USD → "$12.50"; '—' when there is no amount. */
export function formatMoney(minor: number | null, currency: string): string {
  if (minor === null) return '—';
  if (!isCurrencyCode(currency)) return `${minorToDecimal(minor, currency)} ${currency.toUpperCase()}`;
  const digits = currencyDigits(currency);
  return new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() }).format(minor / 10 ** digits);
}

export type MoneyParse = { value: number } | { error: string };

/**
 * A typed price ("12.50", "12.5", "12", "1,250.00") in minor units of the currency; refuses signs,
 * more decimals than the currency has, and amounts beyond a safe integer. Never goes through floating
 * point: the digits are joined as text.
 */
export function parseMoney(text: string, currency: string): MoneyParse {
  const typed = text.trim().replace(/,(?=\d{3}(\D|$))/g, '');
  if (/^-/.test(typed)) return { error: 'The price cannot be negative.' };
  const m = /^(\d+)(?:\.(\d*))?$/.exec(typed) ?? /^()\.(\d+)$/.exec(typed);
  if (!m) return { error: `Enter an amount such as ${minorToDecimal(1250 * 10 ** Math.max(0, currencyDigits(currency) - 2), currency)}.` };
  const digits = currencyDigits(currency);
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  if (fraction.length > digits) {
    return { error: digits === 0 ? `${currency.toUpperCase()} amounts have no decimal places.` : `${currency.toUpperCase()} amounts have at most ${digits} decimal place${digits === 1 ? '' : 's'}.` };
  }
  const minorText = `${m[1] || '0'}${fraction.padEnd(digits, '0')}`.replace(/^0+(?=\d)/, '');
  const value = Number(minorText);
  if (!Number.isSafeInteger(value)) return { error: 'The amount is too large.' };
  return { value };
}
