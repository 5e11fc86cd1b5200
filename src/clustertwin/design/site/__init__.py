"""The site as built: named racks and devices placed on the floor (``inventory``), every link
port to port with its routed length and cable medium (``cabling``), and the cables by medium the
design reports (``summary``). The design stage itself never places the site: it counts links,
cables and media per link class in closed form (``classes``, ``class_reach``, ``class_racks``),
and the placed map takes the same media, so both count the same parts. Pure functions of a
ClusterDesign and the catalog; ``clustertwin export``, the drawings and ``plan --cabling`` place
the site."""
