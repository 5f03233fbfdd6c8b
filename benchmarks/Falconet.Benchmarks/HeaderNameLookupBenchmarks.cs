using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Reflection;
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
    private IndexOfName _indexOf = null!;
    private IndexOfName _emptyDelegate = null!;
    private byte[] _name = Array.Empty<byte>();

    private delegate int IndexOfName(ReadOnlySpan<byte> name);

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

        // The matcher alone, without TryAppend's value handling. The generator keeps it private, so it is bound once here.
        MethodInfo indexOf = typeof(RequestHeaders).GetMethod("IndexOf", BindingFlags.NonPublic | BindingFlags.Static, new[] { typeof(ReadOnlySpan<byte>) })
            ?? throw new InvalidOperationException("RequestHeaders no longer has a private static IndexOf(ReadOnlySpan<byte>).");
        _indexOf = indexOf.CreateDelegate<IndexOfName>();
        _emptyDelegate = typeof(HeaderNameLookupBenchmarks).GetMethod(nameof(NameLength), BindingFlags.NonPublic | BindingFlags.Static)!.CreateDelegate<IndexOfName>();
        if (_indexOf(_name) != _dictionary[Name])
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

    /// <summary>The generated matcher alone (length switch and masked compares), called through a delegate.</summary>
    [Benchmark(Description = "generated IndexOf (via delegate)")]
    public int GeneratedIndexOf() => _indexOf(_name);

    /// <summary>Calibration for the row above: the same delegate call to a method that only reads the span length.</summary>
    [Benchmark(Description = "delegate call only (calibration)")]
    public int DelegateCallOnly() => _emptyDelegate(_name);

    private static int NameLength(ReadOnlySpan<byte> name) => name.Length;
}
