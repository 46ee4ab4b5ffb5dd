/**
 * Copies your clinic's data from clinic-api into sheets of this spreadsheet.
 * How to set it up: docs/spreadsheets.md, "Google Sheets", in the clinic-api documentation.
 *
 * The server address and the API key are NOT written here: they are in
 * Project Settings > Script properties, as CLINIC_API_URL and CLINIC_API_KEY.
 *
 * @OnlyCurrentDoc
 */

// What to copy: one line per sheet. list is citas, clientas or llamadas; query holds the same
// filters as the API reference, joined with &, e.g. 'desde=2026-01-01&hasta=2026-12-31'.
// An empty query gives the API's defaults (citas: today to today+30; llamadas: the last 7 days).
var COPIES = [
  { sheet: 'Citas', list: 'citas', query: '' },
  // { sheet: 'Clientas', list: 'clientas', query: 'vip=true' },
  // { sheet: 'Llamadas', list: 'llamadas', query: '' },
];

// Records per request (the API allows 1 to 500).
var PAGE_SIZE = 500;

// The columns that are numbers in the API, with the number format they get here. Every other
// column is plain text, exactly as the API sends it: a phone keeps its +, a note that starts
// with = stays a note.
var NUMBER_COLUMNS = {
  duracion_min: '0',
  precio: '0.00',
  total_citas: '0',
  total_llamadas: '0',
  duracion_segundos: '0',
};

/** Adds the "Clinic data" menu when the spreadsheet opens. */
function onOpen() {
  SpreadsheetApp.getUi()
    .createMenu('Clinic data')
    .addItem('Update now', 'updateClinicData')
    .addItem('Update every hour', 'startHourlyUpdates')
    .addItem('Stop hourly updates', 'stopHourlyUpdates')
    .addToUi();
}

/** Reads every list of COPIES and writes each into its sheet. */
function updateClinicData() {
  var spreadsheet = SpreadsheetApp.getActiveSpreadsheet();
  var settings;
  try {
    settings = readSettings_();
  } catch (e) {
    spreadsheet.toast(e.message, 'Clinic data: not updated', 30);
    throw e;
  }
  var problems = [];
  COPIES.forEach(function (copy) {
    var sheet = spreadsheet.getSheetByName(copy.sheet) || spreadsheet.insertSheet(copy.sheet);
    try {
      var table = fetchList_(settings, copy);
      writeTable_(sheet, table);
      sheet.getRange(1, 1).setNote('Updated ' + now_(spreadsheet) + ': ' + (table.length - 1) + ' rows.');
    } catch (e) {
      // The sheet keeps the data of the last update that worked.
      sheet.getRange(1, 1).setNote('Update failed ' + now_(spreadsheet) + ': ' + e.message);
      problems.push(copy.sheet + ': ' + e.message);
    }
  });
  if (problems.length > 0) {
    spreadsheet.toast(problems.join('\n'), 'Clinic data: not updated', 30);
    throw new Error(problems.join('\n'));
  }
  spreadsheet.toast('Every sheet is up to date.', 'Clinic data', 5);
}

/** Runs updateClinicData every hour, also while nobody has the spreadsheet open. */
function startHourlyUpdates() {
  stopHourlyUpdates();
  ScriptApp.newTrigger('updateClinicData').timeBased().everyHours(1).create();
  SpreadsheetApp.getActiveSpreadsheet().toast('The data will be updated every hour.', 'Clinic data', 5);
}

/** Removes the hourly update. */
function stopHourlyUpdates() {
  ScriptApp.getProjectTriggers().forEach(function (trigger) {
    if (trigger.getHandlerFunction() === 'updateClinicData') ScriptApp.deleteTrigger(trigger);
  });
}

function readSettings_() {
  var properties = PropertiesService.getScriptProperties();
  var server = (properties.getProperty('CLINIC_API_URL') || '').trim().replace(/\/+$/, '');
  var key = (properties.getProperty('CLINIC_API_KEY') || '').trim();
  var origin = /^https?:\/\/[^\/?#]+/.exec(server);
  if (!origin) {
    throw new Error(
      'CLINIC_API_URL is missing or is not a web address. In Project Settings > Script properties, ' +
        'set CLINIC_API_URL to your server, e.g. https://api.myclinic.example',
    );
  }
  if (!key || /\s/.test(key)) {
    throw new Error('CLINIC_API_KEY is missing or has spaces in it. In Project Settings > Script properties, paste the key as CLINIC_API_KEY.');
  }
  return { server: server, origin: origin[0], key: key };
}

/** The whole list as rows of text, the column names first, following the pages the API links. */
function fetchList_(settings, copy) {
  var query = copy.query ? copy.query + '&' : '';
  var url = settings.server + '/api/v1/' + copy.list + '?' + query + 'limit=' + PAGE_SIZE;
  var table = null;
  for (var page = 0; url !== null; page++) {
    if (page === 1000) throw new Error('more than 1000 pages: narrow the query');
    var response = get_(settings, url);
    var rows = Utilities.parseCsv(response.getContentText('UTF-8')).filter(function (row) {
      return !(row.length === 1 && row[0] === ''); // a blank line, such as the one after the last row
    });
    if (table === null) table = [rows[0]];
    rows.slice(1).forEach(function (row) {
      if (row.length !== table[0].length) throw new Error('a row has ' + row.length + ' cells, expected ' + table[0].length);
      table.push(row);
    });
    url = nextUrl_(settings, response);
  }
  return table;
}

function get_(settings, url) {
  var response;
  try {
    response = UrlFetchApp.fetch(url, {
      method: 'get',
      headers: { Authorization: 'Bearer ' + settings.key, Accept: 'text/csv' },
      muteHttpExceptions: true,
      followRedirects: false,
    });
  } catch (e) {
    throw new Error(
      'could not reach ' + settings.server + ' (' + e.message + '). Check CLINIC_API_URL: ' + 'it must be an address Google can reach on the internet.',
    );
  }
  var status = response.getResponseCode();
  if (status !== 200) throw new Error(explain_(status, response));
  return response;
}

/** What went wrong, in plain words, from the status and the API's error (always JSON). */
function explain_(status, response) {
  var error = {};
  try {
    error = JSON.parse(response.getContentText('UTF-8')).error || {};
  } catch (e) {
    // not the API's answer (a proxy's page, for instance): the status says enough
  }
  var said = error.message ? ' The server said: ' + error.message + '.' : '';
  var code = status + (error.code ? ' ' + error.code : '');
  if (status === 401) {
    return 'the API key was refused (' + code + '): it is wrong, revoked or expired. Make a new key in the dashboard and paste it as CLINIC_API_KEY.';
  }
  if (status === 403) {
    return 'this key may not read this (' + code + ').' + said + ' Ask the clinic owner for a key that may.';
  }
  if (status === 429) {
    var wait = header_(response, 'Retry-After');
    return 'too many requests (' + code + '): try again in ' + (wait || 'a few') + ' seconds.';
  }
  if (status >= 500) {
    return 'the server had a problem (' + code + '). It will be tried again at the next update.' + said + requestId_(error);
  }
  return 'the request was refused (' + code + ').' + said + ' Check this sheet\'s line in COPIES.';
}

function requestId_(error) {
  return error.request_id ? ' If it keeps happening, give this reference to whoever runs the server: ' + error.request_id + '.' : '';
}

/** The next page's address from Link: <...>; rel="next" (a path on the same server), or null on the last page. */
function nextUrl_(settings, response) {
  var link = header_(response, 'Link');
  var next = link && /<([^>]*)>\s*;\s*rel="?next"?/.exec(link);
  if (!next) return null;
  var url = /^https?:/.test(next[1]) ? next[1] : settings.origin + next[1];
  if (url.indexOf(settings.origin + '/') !== 0) throw new Error('the next page is on another server: ' + url);
  return url;
}

/** A response header by its name, whatever its case. */
function header_(response, name) {
  var headers = response.getAllHeaders();
  for (var key in headers) {
    if (key.toLowerCase() === name.toLowerCase()) return String(headers[key]);
  }
  return null;
}

/** Clears the sheet, then writes the table: text columns formatted as plain text before any value is written. */
function writeTable_(sheet, table) {
  var columns = table[0];
  var values = table.map(function (row, i) {
    if (i === 0) return row;
    return row.map(function (cell, c) {
      if (NUMBER_COLUMNS[columns[c]]) return cell !== '' ? Number(cell) : cell;
      // The server puts ' before text that starts like a formula; a plain-text cell needs none.
      return /^'[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/.test(cell) ? cell.slice(1) : cell;
    });
  });
  sheet.clearContents();
  sheet.getRange(1, 1, 1, columns.length).setNumberFormat('@');
  if (values.length > 1) {
    columns.forEach(function (column, c) {
      sheet.getRange(2, c + 1, values.length - 1, 1).setNumberFormat(NUMBER_COLUMNS[column] || '@');
    });
  }
  sheet.getRange(1, 1, values.length, columns.length).setValues(values);
  sheet.setFrozenRows(1);
}

function now_(spreadsheet) {
  return Utilities.formatDate(new Date(), spreadsheet.getSpreadsheetTimeZone(), 'yyyy-MM-dd HH:mm');
}
