namespace Falconet.Generator.Schema;

/// <summary>A method or version name as written in a schema file, with its position for diagnostics.</summary>
internal sealed record NamedEntry(string Name, LocationInfo Location);

/// <summary>A header as written in a schema file, with its position for diagnostics.</summary>
internal sealed record HeaderEntry(string Name, LocationInfo Location, bool Primary, bool ContentLength, EquatableArray<string> Values);

/// <summary>One schema file after reading: the valid entries in file order and the problems found in it.</summary>
internal sealed record SchemaFile(
    string Path,
    EquatableArray<NamedEntry> Methods,
    EquatableArray<NamedEntry> Versions,
    EquatableArray<HeaderEntry> RequestHeaders,
    EquatableArray<HeaderEntry> ResponseHeaders,
    EquatableArray<DiagnosticInfo> Diagnostics);

/// <summary>A header of the effective schema; <see cref="IsDefault"/> when the default schema defines it (a user file may extend it).</summary>
internal sealed record HeaderModel(string Name, bool Primary, bool ContentLength, EquatableArray<string> Values, bool IsDefault = false);

/// <summary>The effective schema: defaults followed by every user file, validated, with no positions.</summary>
internal sealed record SchemaModel(
    EquatableArray<string> Methods,
    EquatableArray<string> Versions,
    EquatableArray<HeaderModel> RequestHeaders,
    EquatableArray<HeaderModel> ResponseHeaders,
    int UserFiles = 0);

/// <summary>The result of merging schemas: the effective model and every diagnostic of every file.</summary>
internal sealed record SchemaResult(SchemaModel Model, EquatableArray<DiagnosticInfo> Diagnostics);
