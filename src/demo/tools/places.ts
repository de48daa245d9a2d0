/**
 * The places the demo tools know: bundled weather samples and IANA time zones for ~20 cities.
 * Static data, so the demo runs offline and the tests stay deterministic.
 */

export interface CityWeather {
  city: string;
  country: string;
  condition: string;
  temperatureC: number;
  humidityPercent: number;
  windKph: number;
}

export interface City {
  name: string;
  country: string;
  timeZone: string;
  /** Other names the city is asked for by. */
  aliases?: string[];
  weather: Omit<CityWeather, 'city' | 'country'>;
}

export const CITIES: readonly City[] = [
  { name: 'Paris', country: 'France', timeZone: 'Europe/Paris', weather: { condition: 'partly cloudy', temperatureC: 18, humidityPercent: 62, windKph: 14 } },
  { name: 'London', country: 'United Kingdom', timeZone: 'Europe/London', weather: { condition: 'light rain', temperatureC: 14, humidityPercent: 81, windKph: 19 } },
  { name: 'Berlin', country: 'Germany', timeZone: 'Europe/Berlin', weather: { condition: 'overcast', temperatureC: 16, humidityPercent: 70, windKph: 11 } },
  { name: 'Madrid', country: 'Spain', timeZone: 'Europe/Madrid', weather: { condition: 'sunny', temperatureC: 27, humidityPercent: 34, windKph: 9 } },
  { name: 'Rome', country: 'Italy', timeZone: 'Europe/Rome', weather: { condition: 'sunny', temperatureC: 25, humidityPercent: 48, windKph: 8 } },
  { name: 'Reykjavik', country: 'Iceland', timeZone: 'Atlantic/Reykjavik', aliases: ['reykjavík'], weather: { condition: 'windy with showers', temperatureC: 8, humidityPercent: 77, windKph: 37 } },
  { name: 'Moscow', country: 'Russia', timeZone: 'Europe/Moscow', weather: { condition: 'clear', temperatureC: 12, humidityPercent: 58, windKph: 13 } },
  { name: 'Cairo', country: 'Egypt', timeZone: 'Africa/Cairo', weather: { condition: 'hot and dry', temperatureC: 34, humidityPercent: 21, windKph: 16 } },
  { name: 'Lagos', country: 'Nigeria', timeZone: 'Africa/Lagos', weather: { condition: 'thunderstorms', temperatureC: 29, humidityPercent: 84, windKph: 12 } },
  { name: 'Cape Town', country: 'South Africa', timeZone: 'Africa/Johannesburg', weather: { condition: 'breezy', temperatureC: 19, humidityPercent: 66, windKph: 31 } },
  { name: 'Dubai', country: 'United Arab Emirates', timeZone: 'Asia/Dubai', weather: { condition: 'hazy sunshine', temperatureC: 38, humidityPercent: 45, windKph: 15 } },
  { name: 'Mumbai', country: 'India', timeZone: 'Asia/Kolkata', aliases: ['bombay'], weather: { condition: 'humid with showers', temperatureC: 31, humidityPercent: 83, windKph: 18 } },
  { name: 'Singapore', country: 'Singapore', timeZone: 'Asia/Singapore', weather: { condition: 'thundery showers', temperatureC: 30, humidityPercent: 80, windKph: 10 } },
  { name: 'Beijing', country: 'China', timeZone: 'Asia/Shanghai', aliases: ['peking'], weather: { condition: 'clear', temperatureC: 22, humidityPercent: 40, windKph: 12 } },
  { name: 'Seoul', country: 'South Korea', timeZone: 'Asia/Seoul', weather: { condition: 'partly cloudy', temperatureC: 20, humidityPercent: 55, windKph: 10 } },
  { name: 'Tokyo', country: 'Japan', timeZone: 'Asia/Tokyo', weather: { condition: 'clear', temperatureC: 21, humidityPercent: 60, windKph: 9 } },
  { name: 'Sydney', country: 'Australia', timeZone: 'Australia/Sydney', weather: { condition: 'sunny', temperatureC: 23, humidityPercent: 57, windKph: 20 } },
  { name: 'New York', country: 'United States', timeZone: 'America/New_York', aliases: ['nyc', 'new york city'], weather: { condition: 'mostly sunny', temperatureC: 20, humidityPercent: 52, windKph: 17 } },
  { name: 'San Francisco', country: 'United States', timeZone: 'America/Los_Angeles', aliases: ['sf'], weather: { condition: 'foggy', temperatureC: 15, humidityPercent: 79, windKph: 22 } },
  { name: 'Toronto', country: 'Canada', timeZone: 'America/Toronto', weather: { condition: 'cloudy', temperatureC: 13, humidityPercent: 64, windKph: 18 } },
  { name: 'Mexico City', country: 'Mexico', timeZone: 'America/Mexico_City', weather: { condition: 'afternoon showers', temperatureC: 22, humidityPercent: 59, windKph: 8 } },
  { name: 'São Paulo', country: 'Brazil', timeZone: 'America/Sao_Paulo', aliases: ['sao paulo'], weather: { condition: 'drizzle', temperatureC: 19, humidityPercent: 76, windKph: 11 } },
  { name: 'Buenos Aires', country: 'Argentina', timeZone: 'America/Argentina/Buenos_Aires', weather: { condition: 'clear', temperatureC: 17, humidityPercent: 63, windKph: 14 } },
];

const fold = (s: string): string =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

const BY_NAME = new Map<string, City>();
for (const city of CITIES) {
  for (const name of [city.name, ...(city.aliases ?? [])]) BY_NAME.set(fold(name), city);
}

/** The city of that name (case, accents and punctuation ignored), if the demo knows it. */
export function findCity(name: string): City | undefined {
  return BY_NAME.get(fold(name));
}

/** Known city names, for error messages and the planner. */
export const CITY_NAMES: readonly string[] = CITIES.map((c) => c.name);
