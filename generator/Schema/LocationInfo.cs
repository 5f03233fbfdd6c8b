using System;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Text;

namespace Falconet.Generator.Schema;

/// <summary>An equatable position inside a schema file, turned into a Roslyn <see cref="Location"/> when reported.</summary>
internal sealed record LocationInfo(string Path, int Start, int Length, int StartLine, int StartColumn, int EndLine, int EndColumn)
{
    public static LocationInfo None { get; } = new(string.Empty, 0, 0, 0, 0, 0, 0);

    public Location ToLocation()
    {
        if (Path.Length == 0)
        {
            return Location.None;
        }

        return Location.Create(
            Path,
            new TextSpan(Start, Length),
            new LinePositionSpan(new LinePosition(StartLine, StartColumn), new LinePosition(EndLine, EndColumn)));
    }
}

/// <summary>An equatable diagnostic: descriptor ID, message arguments and location, with no Roslyn objects kept.</summary>
internal sealed record DiagnosticInfo(string Id, EquatableArray<string> Arguments, LocationInfo Location)
{
    public static DiagnosticInfo Create(DiagnosticDescriptor descriptor, LocationInfo location, params string[] arguments) =>
        new(descriptor.Id, EquatableArray.From(arguments), location);

    public Diagnostic ToDiagnostic()
    {
        DiagnosticDescriptor descriptor = DiagnosticDescriptors.Find(Id);
        object[] args = new object[Arguments.Count];
        for (int i = 0; i < args.Length; i++)
        {
            args[i] = Arguments[i];
        }

        return Diagnostic.Create(descriptor, Location.ToLocation(), args);
    }
}
