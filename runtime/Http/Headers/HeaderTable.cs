using System;
using System.Collections.Generic;
using System.Text;

namespace Falconet.Http;

/// <summary>The known headers of one generated header collection, in bit order, with what the shared collection code needs about them.</summary>
/// <remarks>
/// Generated code creates one per collection type, once: the names and known values come from the schema, and
/// everything derived from them (the lookup by name, the "\r\nName: " bytes a response writes) is built here, so the
/// code that reads and writes headers is the same compiled code for every schema.
/// </remarks>
public sealed class HeaderTable
{
    /// <summary>What a generated name matcher returns for Content-Length, which is kept as a number outside the bit set.</summary>
    public const int ContentLengthIndex = 64;

    /// <summary>The most headers a collection keeps in its bit set.</summary>
    public const int MaxKnownHeaders = 64;

    internal const string ContentLengthName = "Content-Length";

    private readonly string[] _names;
    private readonly string[][] _knownValues;
    private readonly string[]?[] _namesByLength;
    private readonly int[]?[] _indexesByLength;
    private readonly byte[] _prefixes;
    private readonly int[] _prefixOffsets;
    private readonly byte[] _lowerCaseNames;
    private readonly int[] _lowerCaseOffsets;

    /// <summary>Describes the known headers of a collection that is written, never parsed (response headers).</summary>
    /// <param name="names">The names in bit order, as they are written; Content-Length is not among them.</param>
    /// <exception cref="ArgumentException">More than <see cref="MaxKnownHeaders"/> names, or a name twice.</exception>
    public HeaderTable(string[] names)
        : this(names, EmptyValues(names))
    {
    }

    /// <summary>Describes the known headers of a collection that is parsed (request headers), with the values it reuses.</summary>
    /// <param name="headers">The headers in bit order; Content-Length is not among them.</param>
    /// <exception cref="ArgumentException">More than <see cref="MaxKnownHeaders"/> headers, or a name twice.</exception>
    public HeaderTable(KnownHeader[] headers)
        : this(Names(headers), Values(headers))
    {
    }

    private HeaderTable(string[] names, string[][] knownValues)
    {
        if (names.Length > MaxKnownHeaders)
        {
            throw new ArgumentException($"A header collection keeps at most {MaxKnownHeaders} known headers.", nameof(names));
        }

        _names = names;
        _knownValues = knownValues;
        var indexes = new Dictionary<string, int>(names.Length + 1, StringComparer.OrdinalIgnoreCase)
        {
            [ContentLengthName] = ContentLengthIndex,
        };

        int prefixBytes = 0;
        for (int i = 0; i < names.Length; i++)
        {
            if (!indexes.TryAdd(names[i], i))
            {
                throw new ArgumentException($"The header '{names[i]}' is named twice.", nameof(names));
            }

            prefixBytes += names[i].Length + 4;
        }

        // The lookup by name: the names of each length and their indexes (a length holds a handful at most).
        int longest = 0;
        foreach (string name in indexes.Keys)
        {
            longest = Math.Max(longest, name.Length);
        }

        _namesByLength = new string[]?[longest + 1];
        _indexesByLength = new int[]?[longest + 1];
        foreach ((string name, int index) in indexes)
        {
            int length = name.Length;
            _namesByLength[length] = [.. _namesByLength[length] ?? [], name];
            _indexesByLength[length] = [.. _indexesByLength[length] ?? [], index];
        }

        // "\r\nName: " of every known header, back to back, so writing one is a single copy of precomputed bytes.
        _prefixes = new byte[prefixBytes];
        _prefixOffsets = new int[names.Length + 1];
        int offset = 0;
        for (int i = 0; i < names.Length; i++)
        {
            _prefixOffsets[i] = offset;
            offset += Encoding.ASCII.GetBytes("\r\n" + names[i] + ": ", _prefixes.AsSpan(offset));
        }

        _prefixOffsets[names.Length] = offset;

        // The names as HTTP/2 writes them (RFC 9113 section 8.2.1: lower case), back to back likewise.
        _lowerCaseNames = new byte[prefixBytes - (4 * names.Length)];
        _lowerCaseOffsets = new int[names.Length + 1];
        offset = 0;
        for (int i = 0; i < names.Length; i++)
        {
            _lowerCaseOffsets[i] = offset;
            offset += Encoding.ASCII.GetBytes(names[i].ToLowerInvariant(), _lowerCaseNames.AsSpan(offset));
        }

        _lowerCaseOffsets[names.Length] = offset;
    }

    /// <summary>How many headers the bit set holds.</summary>
    public int Count => _names.Length;

    /// <summary>The name of the header at <paramref name="index"/>, as the schema spells it.</summary>
    public string GetName(int index) => _names[index];

    /// <summary>The bit index of <paramref name="name"/> in any letter case, <see cref="ContentLengthIndex"/>, or -1 for a header outside the table.</summary>
    public int IndexOf(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        int length = name.Length;
        if ((uint)length >= (uint)_namesByLength.Length || _namesByLength[length] is not { } names)
        {
            return -1;
        }

        // Callers mostly pass string literals, as the schema's names are (ASP.NET Core's HeaderNames too): interned, so
        // the same object, found by reference before any compare of letters. A case-insensitive FrozenDictionary took
        // 10.4 ns for such a name, this 1.5 ns (HeaderTableLookupBenchmarks); ASP.NET Core looks up three a request.
        for (int i = 0; i < names.Length; i++)
        {
            if (ReferenceEquals(names[i], name))
            {
                return _indexesByLength[length]![i];
            }
        }

        for (int i = 0; i < names.Length; i++)
        {
            if (string.Equals(names[i], name, StringComparison.OrdinalIgnoreCase))
            {
                return _indexesByLength[length]![i];
            }
        }

        return -1;
    }

    internal string[] GetKnownValues(int index) => _knownValues[index];

    /// <summary>"\r\nName: " of the header at <paramref name="index"/>.</summary>
    internal ReadOnlySpan<byte> GetPrefix(int index)
    {
        int start = _prefixOffsets[index];
        return _prefixes.AsSpan(start, _prefixOffsets[index + 1] - start);
    }

    /// <summary>The name of the header at <paramref name="index"/> in lower case, as HTTP/2 writes it.</summary>
    internal ReadOnlySpan<byte> GetLowerCaseName(int index)
    {
        int start = _lowerCaseOffsets[index];
        return _lowerCaseNames.AsSpan(start, _lowerCaseOffsets[index + 1] - start);
    }

    private static string[][] EmptyValues(string[] names)
    {
        ArgumentNullException.ThrowIfNull(names);
        var values = new string[names.Length][];
        Array.Fill(values, Array.Empty<string>());
        return values;
    }

    private static string[] Names(KnownHeader[] headers)
    {
        ArgumentNullException.ThrowIfNull(headers);
        return Array.ConvertAll(headers, static header => header.Name);
    }

    private static string[][] Values(KnownHeader[] headers) => Array.ConvertAll(headers, static header => header.KnownValues);
}
