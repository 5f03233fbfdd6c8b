using System;
using System.Collections.Frozen;
using BenchmarkDotNet.Attributes;
using Falconet.Http;

namespace Falconet.Benchmarks;

/// <summary>
/// Finding a request header's bit index from a name string, as ASP.NET Core's <c>IHeaderDictionary</c> asks on every
/// request (traceparent, tracestate, baggage): <see cref="HeaderTable.IndexOf"/> (names by length, a reference compare
/// before a case-insensitive one) against the case-insensitive FrozenDictionary it replaced, for the interned literal
/// the framework passes, the same name built at run time, and in another letter case.
/// </summary>
[MemoryDiagnoser]
public class HeaderTableLookupBenchmarks
{
    private FrozenDictionary<string, int> _frozen = null!;
    private string _name = "";

    /// <summary>How the name reaches the lookup.</summary>
    [Params("literal", "built", "upper")]
    public string Form { get; set; } = "literal";

    [GlobalSetup]
    public void Setup()
    {
        _frozen = KnownHeaderNames.LoadRequestHeaderIndexes().ToFrozenDictionary(StringComparer.OrdinalIgnoreCase);
        _name = Form switch
        {
            "literal" => "traceparent",
            "built" => new string("traceparent".AsSpan()),
            _ => "TRACEPARENT",
        };

        if (RequestHeaders.Table.IndexOf(_name) != _frozen[_name])
        {
            throw new InvalidOperationException("The table and the dictionary disagree on " + _name + ".");
        }
    }

    [Benchmark(Baseline = true, Description = "FrozenDictionary(OrdinalIgnoreCase)")]
    public int FrozenDictionary() => _frozen.TryGetValue(_name, out int index) ? index : -1;

    [Benchmark(Description = "HeaderTable.IndexOf")]
    public int Table() => RequestHeaders.Table.IndexOf(_name);
}
