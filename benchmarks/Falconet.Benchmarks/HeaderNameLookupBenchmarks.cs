using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Text;
using BenchmarkDotNet.Attributes;
using Falconet.Http;

namespace Falconet.Benchmarks;

/// <summary>
/// Finding the slot of a known header from its raw name bytes: the generated matcher against a case-insensitive
/// Dictionary after ASCII decoding and a FrozenDictionary probed with a stack-decoded char span.
/// </summary>
[MemoryDiagnoser]
public class HeaderNameLookupBenchmarks
{
    private readonly RequestHeaders _headers = new();
    private Dictionary<string, int> _dictionary = null!;
    private FrozenDictionary<string, int>.AlternateLookup<ReadOnlySpan<char>> _frozen;
    private byte[] _name = Array.Empty<byte>();

    /// <summary>The header name as it arrives on the wire.</summary>
    [Params("Host", "Content-Type", "accept-encoding")]
    public string Name { get; set; } = "Host";

    /// <summary>Builds the lookups from the same ordered name list the generated collection uses.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _name = Encoding.ASCII.GetBytes(Name);
        Dictionary<string, int> names = KnownHeaderNames.LoadRequestHeaderIndexes();
        _dictionary = names;
        _frozen = names.ToFrozenDictionary(StringComparer.OrdinalIgnoreCase).GetAlternateLookup<ReadOnlySpan<char>>();

        if (RequestHeaders.IndexOf(_name) != _dictionary[Name])
        {
            throw new InvalidOperationException("The generated matcher and the dictionary disagree on " + Name + ".");
        }
    }

    /// <summary>The common alternative: decode the name to a string, then a case-insensitive Dictionary (allocates the string).</summary>
    [Benchmark(Baseline = true, Description = "ASCII decode + Dictionary(OrdinalIgnoreCase)")]
    public int DecodeAndDictionary() => _dictionary.TryGetValue(Encoding.ASCII.GetString(_name), out int index) ? index : -1;

    /// <summary>The zero-allocation alternative: decode into a stack span, then a FrozenDictionary alternate lookup.</summary>
    [Benchmark(Description = "stackalloc decode + FrozenDictionary span lookup")]
    public int StackDecodeAndFrozenDictionary()
    {
        ReadOnlySpan<byte> name = _name;
        Span<char> chars = stackalloc char[64];
        int length = Encoding.ASCII.GetChars(name, chars);
        return _frozen.TryGetValue(chars.Slice(0, length), out int index) ? index : -1;
    }

    /// <summary>The public path of the generated code: TryAppend of the name with an empty value, then Clear.</summary>
    [Benchmark(Description = "RequestHeaders.TryAppend + Clear")]
    public bool GeneratedTryAppend()
    {
        bool appended = _headers.TryAppend(_name, default);
        _headers.Clear();
        return appended;
    }

    /// <summary>The generated matcher alone (length switch and masked compares), without TryAppend's value handling.</summary>
    [Benchmark(Description = "generated RequestHeaders.IndexOf")]
    public int GeneratedIndexOf() => RequestHeaders.IndexOf(_name);
}
