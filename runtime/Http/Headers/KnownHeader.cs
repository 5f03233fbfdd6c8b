using System;

namespace Falconet.Http;

/// <summary>A header of a parsed collection's <see cref="HeaderTable"/>: its name and the values a parsed request reuses as shared strings.</summary>
public readonly struct KnownHeader
{
    /// <summary>Describes a header.</summary>
    /// <param name="name">The name as the schema spells it.</param>
    /// <param name="knownValues">Values that a request carrying exactly those bytes gets as this one shared string.</param>
    public KnownHeader(string name, params string[] knownValues)
    {
        ArgumentNullException.ThrowIfNull(name);
        ArgumentNullException.ThrowIfNull(knownValues);
        Name = name;
        KnownValues = knownValues;
    }

    /// <summary>The name as the schema spells it.</summary>
    public string Name { get; }

    /// <summary>The values reused as shared strings.</summary>
    public string[] KnownValues { get; }
}
