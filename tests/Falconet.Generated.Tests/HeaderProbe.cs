using System;
using System.Collections.Generic;
using System.Globalization;
using System.Reflection;
using System.Text;
using Falconet.Http;
using Microsoft.Extensions.Primitives;

namespace Falconet.Generated.Tests;

/// <summary>
/// Adds a header name and reports, through the public API only, where the collection stored it. Request headers take the
/// name as bytes through TryAppend (the parser's masked matcher); response headers, which are written and never parsed,
/// take it as a string through the indexer (the table's lookup by name).
/// </summary>
internal sealed class HeaderProbe
{
    private static readonly byte[] s_value = "5"u8.ToArray();

    private readonly IDictionary<string, StringValues> _headers;
    private readonly AppendBytes _append;
    private readonly Dictionary<string, Func<StringValues>> _typed;
    private readonly HashSet<string> _known;

    private HeaderProbe(IDictionary<string, StringValues> headers, AppendBytes append, Dictionary<string, Func<StringValues>> typed, IReadOnlyList<string> known)
    {
        _headers = headers;
        _append = append;
        _typed = typed;
        _known = new HashSet<string>(known, StringComparer.Ordinal);
        KnownNames = known;
    }

    private delegate bool AppendBytes(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value);

    /// <summary>The known names of the collection, from the schema.</summary>
    public IReadOnlyList<string> KnownNames { get; }

    public static HeaderProbe For(string collection)
    {
        if (collection == "request")
        {
            var headers = new RequestHeaders();
            return new HeaderProbe(headers, headers.TryAppend, TypedGetters(headers, () => headers.ContentLength), KnownSchema.RequestHeaders);
        }

        if (collection == "response")
        {
            var headers = new ResponseHeaders();
            return new HeaderProbe(headers, (name, value) => SetByName(headers, name, value), TypedGetters(headers, () => headers.ContentLength), KnownSchema.ResponseHeaders);
        }

        if (collection == "app request")
        {
            var headers = new RequestHeaders<HeaderSet>();
            return new HeaderProbe(headers, headers.TryAppend, TypedGetters(headers, () => headers.ContentLength), KnownSchema.AppRequestHeaders);
        }

        if (collection == "app response")
        {
            var headers = new ResponseHeaders<HeaderSet>();
            return new HeaderProbe(headers, (name, value) => SetByName(headers, name, value), TypedGetters(headers, () => headers.ContentLength), KnownSchema.AppResponseHeaders);
        }

        throw new ArgumentOutOfRangeException(nameof(collection));
    }

    private static bool SetByName(IDictionary<string, StringValues> headers, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        headers[Encoding.Latin1.GetString(name)] = Encoding.Latin1.GetString(value);
        return true;
    }

    /// <summary>The known name of this collection that equals <paramref name="name"/> ignoring case, or null: the plain reference.</summary>
    public string? Reference(string name)
    {
        foreach (string known in KnownNames)
        {
            if (string.Equals(name, known, StringComparison.OrdinalIgnoreCase))
            {
                return known;
            }
        }

        return null;
    }

    /// <summary>
    /// Appends <paramref name="name"/> to the cleared collection and returns the known header it landed in, or null when it
    /// was kept as an unknown header under its own spelling. Fails when the storage is inconsistent.
    /// </summary>
    public string? Classify(ReadOnlySpan<byte> name)
    {
        _headers.Clear();
        if (!_append(name, s_value))
        {
            throw new InvalidOperationException("TryAppend refused '" + Encoding.Latin1.GetString(name) + "'.");
        }

        if (_headers.Count != 1)
        {
            throw new InvalidOperationException("Count is " + _headers.Count + " after one append of '" + Encoding.Latin1.GetString(name) + "'.");
        }

        KeyValuePair<string, StringValues> single = default;
        int seen = 0;
        foreach (KeyValuePair<string, StringValues> pair in _headers)
        {
            single = pair;
            seen++;
        }

        if (seen != 1 || single.Value.Count != 1 || single.Value[0] != "5")
        {
            throw new InvalidOperationException("Enumeration after one append of '" + Encoding.Latin1.GetString(name) + "' gave " + seen + " entries, value '" + single.Value + "'.");
        }

        // A known header is enumerated under its schema name and is visible through its typed property.
        if (_known.Contains(single.Key) && _typed[single.Key]() == "5")
        {
            return single.Key;
        }

        string spelled = Encoding.Latin1.GetString(name);
        if (single.Key != spelled)
        {
            throw new InvalidOperationException("'" + spelled + "' was stored under the unexpected key '" + single.Key + "'.");
        }

        return null;
    }

    // Typed properties are the PascalCase of the name without its punctuation, so they are found by comparing letters and
    // digits only: instance properties for the defaults, and for an app's set the getters of its extension properties.
    private static Dictionary<string, Func<StringValues>> TypedGetters(IDictionary<string, StringValues> headers, Func<long?> contentLength)
    {
        var byLetters = new Dictionary<string, Func<StringValues>>(StringComparer.OrdinalIgnoreCase);
        foreach (PropertyInfo property in headers.GetType().GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            if (property.PropertyType == typeof(StringValues) && property.GetIndexParameters().Length == 0)
            {
                byLetters.Add(property.Name, property.GetMethod!.CreateDelegate<Func<StringValues>>(headers));
            }
        }

        foreach (MethodInfo getter in typeof(HeaderSetExtensions).GetMethods(BindingFlags.Public | BindingFlags.Static))
        {
            ParameterInfo[] parameters = getter.GetParameters();
            if (getter.Name.StartsWith("get_", StringComparison.Ordinal) && parameters.Length == 1 && parameters[0].ParameterType == headers.GetType())
            {
                byLetters.Add(getter.Name[4..], () => (StringValues)getter.Invoke(null, new object[] { headers })!);
            }
        }

        IReadOnlyList<string> known = headers switch
        {
            RequestHeaders<HeaderSet> => KnownSchema.AppRequestHeaders,
            ResponseHeaders<HeaderSet> => KnownSchema.AppResponseHeaders,
            RequestHeaders => KnownSchema.RequestHeaders,
            _ => KnownSchema.ResponseHeaders,
        };
        var typed = new Dictionary<string, Func<StringValues>>(StringComparer.Ordinal);
        foreach (string name in known)
        {
            if (string.Equals(name, "Content-Length", StringComparison.OrdinalIgnoreCase))
            {
                typed.Add(name, () => contentLength() is long length ? length.ToString(CultureInfo.InvariantCulture) : default(StringValues));
            }
            else if (byLetters.TryGetValue(LettersAndDigits(name), out Func<StringValues>? getter))
            {
                typed.Add(name, getter);
            }
            else
            {
                throw new InvalidOperationException(headers.GetType().Name + " has no typed property for the known header '" + name + "'.");
            }
        }

        return typed;
    }

    private static string LettersAndDigits(string name)
    {
        var letters = new StringBuilder(name.Length);
        foreach (char c in name)
        {
            if (char.IsAsciiLetterOrDigit(c))
            {
                letters.Append(c);
            }
        }

        return letters.ToString();
    }
}
