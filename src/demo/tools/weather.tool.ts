import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { throwIfAborted } from '../../executor/abortable';
import { CITY_NAMES, findCity, type CityWeather } from './places';

export const WEATHER_TOOL = 'weather';

/** Current conditions in a city, from bundled sample data; an unknown city is a real error. */
export function createWeatherTool() {
  return tool(
    ({ city }, config): CityWeather => {
      throwIfAborted(config?.signal);
      const found = findCity(city);
      if (!found) throw new Error(`no weather data for "${city}" (known cities: ${CITY_NAMES.join(', ')})`);
      return { city: found.name, country: found.country, ...found.weather };
    },
    {
      name: WEATHER_TOOL,
      description: `Current weather in a city (bundled data for: ${CITY_NAMES.join(', ')}).`,
      schema: z.object({ city: z.string().min(1).describe('City name, e.g. "Paris"') }),
    },
  );
}
