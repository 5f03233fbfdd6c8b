namespace Falconet.Generator.Schema;

/// <summary>A method or version name as written in a schema file, with its position for diagnostics.</summary>
internal sealed record NamedEntry(string Name, LocationInfo Location);

/// <summary>A header as written in a schema file, with its position for diagnostics.</summary>
internal sealed record HeaderEntry(string Name, LocationInfo Location, bool Primary, bool ContentLength, EquatableArray<string> Values);

/// <summary>One schema file after reading: the valid entries in file order and the problems found in it.</summary>
/// <remarks><see cref="HPack"/>: the file's <c>hpack</c> section, null when it has none; only the default schema may have one.</remarks>
internal sealed record SchemaFile(
    string Path,
    EquatableArray<NamedEntry> Methods,
    EquatableArray<NamedEntry> Versions,
    EquatableArray<HeaderEntry> RequestHeaders,
    EquatableArray<HeaderEntry> ResponseHeaders,
    EquatableArray<DiagnosticInfo> Diagnostics,
    HPackSection? HPack = null);

/// <summary>
/// The <c>hpack</c> section of a schema file as read: <see cref="Model"/> is null when the section has an error (the
/// generator then emits no HPACK tables); <see cref="Location"/> is where the property is named, for FALC019.
/// </summary>
internal sealed record HPackSection(LocationInfo Location, HPackModel? Model);

/// <summary>An entry of the HPACK static table (RFC 7541 Appendix A): a lower-case name and a value, empty for a name-only entry.</summary>
internal sealed record HPackStaticEntry(string Name, string Value);

/// <summary>The Huffman code of one symbol (RFC 7541 Appendix B): <see cref="Code"/> in its low <see cref="Bits"/> bits.</summary>
internal sealed record HuffmanCode(uint Code, int Bits);

/// <summary>The HPACK data of the default schema, validated: the static table from index 1, the Huffman code by symbol (256 is EOS).</summary>
internal sealed record HPackModel(EquatableArray<HPackStaticEntry> StaticTable, EquatableArray<HuffmanCode> Huffman);

/// <summary>A header of the effective schema; <see cref="IsDefault"/> when the default schema defines it (a user file may extend it).</summary>
internal sealed record HeaderModel(string Name, bool Primary, bool ContentLength, EquatableArray<string> Values, bool IsDefault = false);

/// <summary>The effective schema: defaults followed by every user file, validated, with no positions.</summary>
internal sealed record SchemaModel(
    EquatableArray<string> Methods,
    EquatableArray<string> Versions,
    EquatableArray<HeaderModel> RequestHeaders,
    EquatableArray<HeaderModel> ResponseHeaders,
    int UserFiles = 0,
    HPackModel? HPack = null);

/// <summary>The result of merging schemas: the effective model and every diagnostic of every file.</summary>
internal sealed record SchemaResult(SchemaModel Model, EquatableArray<DiagnosticInfo> Diagnostics);
