using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;
using BenchmarkDotNet.Attributes;
using Falconet.Http;
using Microsoft.Extensions.Primitives;

namespace Falconet.Benchmarks;

/// <summary>
/// One request of a keep-alive connection: fill the eight headers of a typical browser request, read three, clear for the
/// next request. The generated RequestHeaders against a Dictionary of decoded strings.
/// </summary>
[MemoryDiagnoser]
public class RequestHeadersCycleBenchmarks
{
    private static readonly (string Name, string Value)[] s_browserRequest =
    {
        ("Host", "www.example.com"),
        ("User-Agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0"),
        ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
        ("Accept-Encoding", "gzip, deflate, br, zstd"),
        ("Accept-Language", "en-US,en;q=0.5"),
        ("Connection", "keep-alive"),
        ("Cookie", "session=8f14e45fceea167a5a36dedd4bea2543; theme=dark; consent=1"),
        ("Referer", "https://www.example.com/articles/2026/falconet-headers"),
    };

    private readonly byte[][] _names = Encode(name: true);
    private readonly byte[][] _values = Encode(name: false);
    private readonly byte[][] _emptyValues = EmptyValues();
    private readonly RequestHeaders _headers = new();
    private readonly RequestHeaders<HeaderSet> _appHeaders = new();
    private readonly Dictionary<string, StringValues> _dictionary = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>The common alternative: decode name and value to strings and keep them in a case-insensitive Dictionary.</summary>
    [Benchmark(Baseline = true, Description = "Dictionary<string, StringValues>")]
    public int Dictionary()
    {
        Dictionary<string, StringValues> headers = _dictionary;
        for (int i = 0; i < _names.Length; i++)
        {
            string name = Encoding.ASCII.GetString(_names[i]);
            string value = Encoding.Latin1.GetString(_values[i]);
            ref StringValues slot = ref CollectionsMarshal.GetValueRefOrAddDefault(headers, name, out bool exists);
            slot = exists ? StringValues.Concat(slot, value) : new StringValues(value);
        }

        int read = 0;
        if (headers.TryGetValue("Host", out StringValues host))
        {
            read += host.Count;
        }

        if (headers.TryGetValue("Cookie", out StringValues cookie))
        {
            read += cookie.Count;
        }

        if (headers.TryGetValue("Accept-Encoding", out StringValues encoding))
        {
            read += encoding.Count;
        }

        headers.Clear();
        return read;
    }

    /// <summary>The generated collection: masked name match, value strings reused from the previous request, typed reads.</summary>
    [Benchmark(Description = "generated RequestHeaders")]
    public int Generated()
    {
        RequestHeaders headers = _headers;
        for (int i = 0; i < _names.Length; i++)
        {
            headers.TryAppend(_names[i], _values[i]);
        }

        int read = headers.Host.Count + headers.Cookie.Count + headers.AcceptEncoding.Count;
        headers.Clear();
        return read;
    }

    // The two parser-path rows are written out rather than shared through a helper generic over the set: with one generic
    // helper, its two instantiations measured 2 to 5 times apart in the interleaved run (whichever reached optimized code
    // second was the slow one) and equal with DOTNET_TieredPGO=0, a tiering effect of the harness, not of the path.

    /// <summary>The same cycle as the server's parser runs it: the built-in set's matcher called directly, then the collection.</summary>
    [Benchmark(Description = "generated RequestHeaders, parser's path")]
    public int GeneratedParserPath()
    {
        RequestHeaders headers = _headers;
        for (int i = 0; i < _names.Length; i++)
        {
            headers.TryAppendMatched(RequestHeaders.IndexOf(_names[i]), _names[i], _values[i]);
        }

        int read = headers.Host.Count + headers.Cookie.Count + headers.AcceptEncoding.Count;
        headers.Clear();
        return read;
    }

    /// <summary>The parser's path into an app's header set (benchmark.headers.json): the same eight default headers, its matcher.</summary>
    [Benchmark(Description = "app's RequestHeaders<HeaderSet>, parser's path")]
    public int AppSetParserPath()
    {
        RequestHeaders<HeaderSet> headers = _appHeaders;
        for (int i = 0; i < _names.Length; i++)
        {
            headers.TryAppendMatched(HeaderSet.IndexOfRequestHeader(_names[i]), _names[i], _values[i]);
        }

        int read = headers.Host.Count + headers.Cookie.Count + headers.AcceptEncoding.Count;
        headers.Clear();
        return read;
    }

    /// <summary>The same cycle with empty values: what name matching, bit set and Clear cost without the value strings.</summary>
    [Benchmark(Description = "generated RequestHeaders, empty values")]
    public int GeneratedEmptyValues()
    {
        RequestHeaders headers = _headers;
        for (int i = 0; i < _names.Length; i++)
        {
            headers.TryAppend(_names[i], _emptyValues[i]);
        }

        int read = headers.Host.Count + headers.Cookie.Count + headers.AcceptEncoding.Count;
        headers.Clear();
        return read;
    }

    private static byte[][] EmptyValues()
    {
        var empty = new byte[s_browserRequest.Length][];
        Array.Fill(empty, Array.Empty<byte>());
        return empty;
    }

    private static byte[][] Encode(bool name)
    {
        var encoded = new byte[s_browserRequest.Length][];
        for (int i = 0; i < encoded.Length; i++)
        {
            encoded[i] = Encoding.ASCII.GetBytes(name ? s_browserRequest[i].Name : s_browserRequest[i].Value);
        }

        return encoded;
    }
}
